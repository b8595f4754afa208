//! Micro-benchmarks of the core, in bytes of UTF-8 text per second, with no Python at all.
//!
//! For each folder of the corpus (`$SPANCHUNK_CORPUS`, default `../shared/corpus` next to the
//! crate root; a relative path is taken from the crate root), every file is cut in turn:
//!
//! - `tree_spans`: the parent-child job, parents of 2000 chars and children of 400 inside them,
//!   byte and char spans of both levels;
//! - `split`: one level of 400 chars (`Splitter::split`, byte spans only);
//! - `tree_spans_1024_256_tokens`: the same job in `o200k_base` tokens.
//!
//! Run with `cargo bench --bench core`; divan prints the throughput column from the byte
//! counter (decimal units: 1 MB/s is 10^6 bytes per second).

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use _core::engine::tree_spans_by_atoms;
use _core::sizing::token::{forget_counts, TokenSizer};
use _core::{tree_spans, Splitter, SplitterConfig, Unit};
use divan::counter::BytesCount;
use divan::{black_box, Bencher};

/// The texts of one corpus folder.
struct Folder {
    name: String,
    texts: Vec<String>,
    bytes: usize,
}

static CORPUS: LazyLock<Vec<Folder>> = LazyLock::new(load_corpus);

fn corpus_root() -> PathBuf {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let configured = std::env::var_os("SPANCHUNK_CORPUS")
        .map_or_else(|| PathBuf::from("../shared/corpus"), PathBuf::from);
    crate_root.join(configured)
}

/// Regular, non-hidden files under `folder`, recursively, in sorted order.
fn files_under(folder: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(folder) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .collect();
    paths.sort();
    for path in paths {
        let hidden = path
            .file_name()
            .is_some_and(|name| name.to_string_lossy().starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            files_under(&path, out);
        } else if path.is_file() {
            out.push(path);
        }
    }
}

fn load_corpus() -> Vec<Folder> {
    let root = corpus_root();
    let Ok(entries) = fs::read_dir(&root) else {
        eprintln!(
            "corpus folder {} is absent: set SPANCHUNK_CORPUS to the shared corpus; nothing to bench",
            root.display()
        );
        return Vec::new();
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    folders
        .into_iter()
        .map(|folder| {
            let mut paths = Vec::new();
            files_under(&folder, &mut paths);
            // The corpus is UTF-8 throughout; a file that is not is skipped, as the CLI does.
            let texts: Vec<String> = paths
                .iter()
                .filter_map(|path| String::from_utf8(fs::read(path).ok()?).ok())
                .collect();
            let bytes = texts.iter().map(String::len).sum();
            let name = folder
                .file_name()
                .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
            Folder { name, texts, bytes }
        })
        .filter(|folder| folder.bytes > 0)
        .collect()
}

fn folder_names() -> Vec<&'static str> {
    CORPUS.iter().map(|folder| folder.name.as_str()).collect()
}

fn folder(name: &str) -> &'static Folder {
    CORPUS
        .iter()
        .find(|folder| folder.name == name)
        .expect("a folder listed by folder_names")
}

fn splitter(chunk_size: usize) -> Splitter {
    Splitter::new(SplitterConfig::new(chunk_size), Unit::Char).expect("valid settings")
}

/// Parents of 2000 chars, children of 400: spans of both levels, every file of the folder.
#[divan::bench(args = folder_names())]
fn tree_spans_2000_400(bencher: Bencher, name: &str) {
    let folder = folder(name);
    let (parent, child) = (splitter(2000), splitter(400));
    bencher.counter(BytesCount::new(folder.bytes)).bench(|| {
        for text in &folder.texts {
            let table = tree_spans(&[&parent, &child], black_box(text)).expect("char sizes");
            black_box(table);
        }
    });
}

/// The same job by the atom engine alone (no seeking; see `rust/engine/seek.rs`).
#[divan::bench(args = folder_names())]
fn tree_spans_by_atoms_2000_400(bencher: Bencher, name: &str) {
    let folder = folder(name);
    let (parent, child) = (splitter(2000), splitter(400));
    bencher.counter(BytesCount::new(folder.bytes)).bench(|| {
        for text in &folder.texts {
            let table =
                tree_spans_by_atoms(&[&parent, &child], black_box(text)).expect("char sizes");
            black_box(table);
        }
    });
}

/// One level of 400 chars: byte spans, every file of the folder.
#[divan::bench(args = folder_names())]
fn split_400(bencher: Bencher, name: &str) {
    let folder = folder(name);
    let chunker = splitter(400);
    bencher.counter(BytesCount::new(folder.bytes)).bench(|| {
        for text in &folder.texts {
            black_box(chunker.split(black_box(text)).expect("char sizes"));
        }
    });
}

/// Parents of 1024 and children of 256 `o200k_base` tokens, every file of the folder, each
/// iteration from cold token counts (`forget_counts`).
#[divan::bench(args = folder_names())]
fn tree_spans_1024_256_tokens(bencher: Bencher, name: &str) {
    let folder = folder(name);
    let in_tokens = |size| {
        let sizer = TokenSizer::tiktoken("o200k_base").expect("a compiled-in encoding");
        Splitter::with_sizer(SplitterConfig::new(size), Box::new(sizer)).expect("valid settings")
    };
    let (parent, child) = (in_tokens(1024), in_tokens(256));
    bencher.counter(BytesCount::new(folder.bytes)).bench(|| {
        forget_counts();
        for text in &folder.texts {
            let table = tree_spans(&[&parent, &child], black_box(text)).expect("token sizes");
            black_box(table);
        }
    });
}

fn main() {
    divan::main();
}
