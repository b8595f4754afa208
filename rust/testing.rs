//! Test inputs shared by the modules' tests: the shared corpus, and random text drawn from an
//! alphabet of the characters a test cares about.

use std::path::PathBuf;

/// The shared corpus: `$SPANCHUNK_CORPUS`, else `../shared/corpus` beside the checkout (as
/// the Python tests and the benchmarks find it).
fn corpus_root() -> PathBuf {
    let crate_root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    crate_root.join(
        std::env::var_os("SPANCHUNK_CORPUS")
            .map_or_else(|| PathBuf::from("../shared/corpus"), PathBuf::from),
    )
}

/// The JSON of the shared all-MiniLM-L6-v2 tokenizer, in the corpus's sibling folder
/// `tokenizers/`; None (said on stderr) where it is absent: a clone on its own has no
/// tokenizer.json, and the tests that need one then check nothing.
pub fn tokenizer_json() -> Option<String> {
    let path = corpus_root().join("../tokenizers/all-MiniLM-L6-v2/tokenizer.json");
    match std::fs::read_to_string(&path) {
        Ok(json) => Some(json),
        Err(error) => {
            eprintln!(
                "skipped: the shared tokenizer {}: {error}; set SPANCHUNK_CORPUS to the \
                 shared corpus (CI has it)",
                path.display()
            );
            None
        }
    }
}

/// The small texts of `tests/data/texts/`, written for the tests: what `corpus_texts`
/// gives where the shared corpus is absent.
const VENDORED: [&str; 3] = [
    include_str!("../tests/data/texts/guide.md"),
    include_str!("../tests/data/texts/zh.md"),
    include_str!("../tests/data/texts/prose.txt"),
];

/// The first `per_folder` files (by name) of each folder of the shared corpus, each cut to
/// `max_chars` characters; where the corpus is absent (a clone on its own), the texts of
/// `tests/data/texts/`, said on stderr.
pub fn corpus_texts(per_folder: usize, max_chars: usize) -> Vec<String> {
    let corpus = corpus_root();
    if !corpus.is_dir() {
        eprintln!(
            "the shared corpus {} is absent: the tests' own texts instead (set \
             SPANCHUNK_CORPUS to the corpus; CI has it)",
            corpus.display()
        );
        return VENDORED
            .iter()
            .map(|text| text.chars().take(max_chars).collect())
            .collect();
    }
    let mut texts = Vec::new();
    for folder in ["markdown-en", "markdown-zh", "gutenberg"] {
        let mut paths: Vec<_> = std::fs::read_dir(corpus.join(folder))
            .unwrap_or_else(|error| {
                panic!(
                    "the shared corpus {}: {error}; set SPANCHUNK_CORPUS to it",
                    corpus.display()
                )
            })
            .flatten()
            .map(|entry| entry.path())
            .collect();
        paths.sort();
        for path in paths.iter().take(per_folder) {
            let text = std::fs::read_to_string(path).expect("a UTF-8 corpus file");
            texts.push(text.chars().take(max_chars).collect());
        }
    }
    texts
}

/// `count` texts of up to `max_len` strings of `alphabet` each, the same on every run
/// (xorshift from `seed`).
#[allow(clippy::cast_possible_truncation)] // indices below the alphabet's length
pub fn random_texts<S: AsRef<str>>(
    alphabet: &[S],
    count: usize,
    max_len: u64,
    seed: u64,
) -> Vec<String> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|_| {
            let length = next() % max_len;
            (0..length)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize].as_ref())
                .collect()
        })
        .collect()
}

/// Texts of every length 0..=130 bytes, each at several offsets from its allocation's start
/// (so the SIMD loads see several pointer alignments), mixing 1- to 4-byte chars, line feeds
/// and carriage returns so that multi-byte chars straddle the 16-, 32- and 64-byte block
/// edges at every phase. Each is `(holder, offset)`: the text is `&holder[offset..]`. Under
/// Miri, fewer offsets and phases.
pub fn block_edge_texts() -> Vec<(String, usize)> {
    const PATTERN: [&str; 9] = ["a", "é", "\n", "中", "😀", "\r", "\n", "b", "\u{301}"];
    let (offsets, phases) = if cfg!(miri) { (2, 3) } else { (5, 9) };
    let mut texts = Vec::new();
    for length in 0..=130 {
        for phase in 0..phases {
            let mut content = String::new();
            for part in PATTERN.iter().cycle().skip(phase) {
                if content.len() + part.len() > length {
                    break;
                }
                content.push_str(part);
            }
            // Pads with ASCII to the exact length (the cut above stopped at a char edge).
            while content.len() < length {
                content.push('x');
            }
            for offset in 0..offsets {
                texts.push(("_".repeat(offset) + &content, offset));
            }
        }
    }
    texts
}
