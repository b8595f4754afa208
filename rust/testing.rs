//! Test inputs shared by the modules' tests: the shared corpus, and random text drawn from an
//! alphabet of the characters a test cares about.

/// The first `per_folder` files (by name) of each folder of the shared corpus, each cut to
/// `max_chars` characters.
///
/// # Panics
/// The shared corpus is absent (`../shared/corpus` beside the checkout).
pub fn corpus_texts(per_folder: usize, max_chars: usize) -> Vec<String> {
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");
    let mut texts = Vec::new();
    for folder in ["markdown-en", "markdown-zh", "gutenberg"] {
        let mut paths: Vec<_> = std::fs::read_dir(format!("{corpus}/{folder}"))
            .expect("the shared corpus, ../shared/corpus beside the checkout")
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
