//! One batch of the job: each document read (its bytes, its text, or its file), decoded, cut
//! by its chunker and handed to a collector (`job::collect`: JSON Lines records, Parquet
//! columns, Arrow rows, the store's rows). The one loop behind every output of the command
//! line and Ray's batch function, run on the calling thread (a worker's, the GIL released).

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;

use super::read::{read_text_file_into, Skip};
use crate::engine::{tree, Splitter};
use crate::error::ChunkError;
use crate::ids;
use crate::markdown::Outline;
use crate::output::sizes::ChunkSizes;
use crate::output::{self, Document};
use crate::table::SpanTable;
use crate::text::decode::decode_text;

/// The kind of a file that could not be opened or read (the words the command line counts
/// skipped files by).
pub const UNREADABLE: &str = "unreadable";
/// The kind of a file whose size or modification time changed while it was read.
pub const CHANGED: &str = "changed while read";
/// The kind of a file with a NUL byte in its first 8 KB.
pub const BINARY: &str = "binary";
/// The kind of a document that is not text (UTF-8, or UTF-16 or UTF-32 by its mark).
pub const NOT_UTF8: &str = "not UTF-8";
/// The kind of a document the engine refused (its message says why).
pub const NOT_CHUNKED: &str = "chunking failed";

/// Why a document of a batch was not cut.
#[derive(Debug)]
pub enum Failure {
    /// Its file could not be opened or read.
    Unreadable(std::io::Error),
    /// Its file changed while it was read.
    Changed,
    /// Its file is binary.
    Binary,
    /// Its bytes are not text (the message names the byte and its offset).
    NotText(String),
    /// The engine refused it.
    NotChunked(ChunkError),
}

impl Failure {
    /// The kind, as the command line counts skipped files.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Unreadable(_) => UNREADABLE,
            Self::Changed => CHANGED,
            Self::Binary => BINARY,
            Self::NotText(_) => NOT_UTF8,
            Self::NotChunked(_) => NOT_CHUNKED,
        }
    }

    /// The message the command line prints (an unreadable file's is the error's own words;
    /// the bindings give the system's, as Python words them).
    #[must_use]
    pub fn message(&self) -> String {
        match self {
            Self::Unreadable(error) => error.to_string(),
            Self::Changed => "the file changed while it was read; run again".to_owned(),
            Self::Binary => "binary (a NUL byte in the first 8 KB)".to_owned(),
            Self::NotText(message) => message.clone(),
            Self::NotChunked(error) => error.to_string(),
        }
    }
}

impl From<Skip> for Failure {
    fn from(skip: Skip) -> Self {
        match skip {
            Skip::Unreadable(error) => Self::Unreadable(error),
            Skip::Changed => Self::Changed,
            Skip::Binary => Self::Binary,
        }
    }
}

/// The chunkers of a batch and each document's: `levels[of[position]]` (parents first) and
/// `fingerprints[of[position]]`.
#[derive(Debug)]
pub struct Chunkers {
    levels: Vec<Vec<Arc<Splitter>>>,
    fingerprints: Vec<String>,
    of: Vec<usize>,
}

impl Chunkers {
    /// `chunkers` as (levels, fingerprint) pairs; `of` the index of each of the `documents`'
    /// chunker (None: the first for all).
    ///
    /// # Errors
    /// No chunker, one index per document not given, or an index out of range (the message
    /// says which).
    pub fn new(
        chunkers: Vec<(Vec<Arc<Splitter>>, String)>,
        of: Option<Vec<usize>>,
        documents: usize,
    ) -> Result<Self, String> {
        if chunkers.is_empty() {
            return Err("pass at least one (levels, fingerprint) chunker".to_owned());
        }
        let of = of.unwrap_or_else(|| vec![0; documents]);
        if of.len() != documents {
            return Err(format!(
                "{documents} documents and {} chunker indexes: pass one per document",
                of.len()
            ));
        }
        if let Some(&bad) = of.iter().find(|&&index| index >= chunkers.len()) {
            return Err(format!(
                "chunker index {bad} out of range ({} chunkers)",
                chunkers.len()
            ));
        }
        let (levels, fingerprints) = chunkers.into_iter().unzip();
        Ok(Self {
            levels,
            fingerprints,
            of,
        })
    }

    /// One chunker for all of `documents`.
    #[must_use]
    pub fn one(levels: Vec<Arc<Splitter>>, fingerprint: String, documents: usize) -> Self {
        Self {
            levels: vec![levels],
            fingerprints: vec![fingerprint],
            of: vec![0; documents],
        }
    }
}

/// Where a batch's documents come from.
#[derive(Debug, Clone, Copy)]
pub enum Inputs<'a> {
    /// Their bytes, decoded here.
    Bytes(&'a [&'a [u8]]),
    /// Their text.
    Texts(&'a [&'a str]),
    /// The files to read them from (`job::read`).
    Files(&'a [PathBuf]),
}

impl Inputs<'_> {
    /// The number of documents.
    #[must_use]
    pub fn len(&self) -> usize {
        match self {
            Self::Bytes(datas) => datas.len(),
            Self::Texts(texts) => texts.len(),
            Self::Files(paths) => paths.len(),
        }
    }

    /// Whether there is none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A batch: its documents, and for each its source (None: its document id) and its id
/// (None, or None at a position: the hash of its text, `ids::text_id`).
#[derive(Debug, Clone, Copy)]
pub struct Documents<'a> {
    /// Where the documents come from.
    pub inputs: Inputs<'a>,
    /// Each document's source.
    pub sources: Option<&'a [&'a str]>,
    /// Each document's id.
    pub ids: Option<&'a [Option<&'a str>]>,
}

impl<'a> Documents<'a> {
    /// The documents of `inputs`, each its own source, each id the hash of its text.
    #[must_use]
    pub fn new(inputs: Inputs<'a>) -> Self {
        Self {
            inputs,
            sources: None,
            ids: None,
        }
    }

    /// Checks that every list holds one entry per document.
    ///
    /// # Errors
    /// The message naming the lists whose lengths differ.
    pub fn check(&self) -> Result<(), String> {
        let documents = self.inputs.len();
        if let Some(sources) = self.sources.filter(|sources| sources.len() != documents) {
            return Err(format!(
                "{documents} documents and {} sources: pass one source per document",
                sources.len()
            ));
        }
        if let Some(ids) = self.ids.filter(|ids| ids.len() != documents) {
            return Err(format!(
                "{documents} documents and {} document ids: pass one id per document, or None",
                ids.len()
            ));
        }
        Ok(())
    }
}

/// What takes each document a batch cuts.
pub trait Collect {
    /// The document at `position` in the batch, cut into `table` (its Markdown outline with
    /// it, for a Markdown level).
    fn document(
        &mut self,
        position: usize,
        document: &Document<'_>,
        table: SpanTable,
        outline: Option<Outline>,
    );
}

/// What a batch did: each document's failure (None: cut and collected), and the char length
/// of every chunk cut, by level.
#[derive(Debug, Default)]
pub struct Outcome {
    /// One entry per document, in order.
    pub failures: Vec<Option<Failure>>,
    /// The char length of every chunk cut, by level.
    pub sizes: ChunkSizes,
}

/// Cuts every document of `documents` with its chunker and hands it to `collect`, in order.
///
/// # Panics
/// `chunkers` was made for another number of documents, or a list of `documents` is too
/// short ([`Documents::check`] and [`Chunkers::new`] refuse both).
pub fn run(chunkers: &Chunkers, documents: &Documents<'_>, collect: &mut impl Collect) -> Outcome {
    let count = documents.inputs.len();
    assert_eq!(chunkers.of.len(), count, "one chunker index per document");
    let borrowed: Vec<Vec<&Splitter>> = chunkers
        .levels
        .iter()
        .map(|levels| levels.iter().map(AsRef::as_ref).collect())
        .collect();
    // One buffer for every file of the batch (`read::read_text_file_into`), a spare one
    // (`output::buffer`): a fresh one per batch, grown file by file, was faulted in page by
    // page on every batch (perf: a third more page faults on 2 workers).
    let mut file_bytes = output::buffer(0);
    let mut outcome = Outcome {
        failures: Vec::with_capacity(count),
        sizes: ChunkSizes::default(),
    };
    for position in 0..count {
        let decoded: Cow<'_, str> = match documents.inputs {
            Inputs::Texts(texts) => Cow::Borrowed(texts[position]),
            Inputs::Bytes(datas) => match decode_text(datas[position]) {
                Ok(text) => text,
                Err(message) => {
                    outcome.failures.push(Some(Failure::NotText(message)));
                    continue;
                }
            },
            Inputs::Files(paths) => {
                if let Err(skip) = read_text_file_into(&paths[position], &mut file_bytes) {
                    outcome.failures.push(Some(skip.into()));
                    continue;
                }
                match decode_text(&file_bytes) {
                    Ok(text) => text,
                    Err(message) => {
                        outcome.failures.push(Some(Failure::NotText(message)));
                        continue;
                    }
                }
            }
        };
        let text: &str = &decoded;
        let chunker = chunkers.of[position];
        let levels = &borrowed[chunker];
        let given = documents.ids.and_then(|ids| ids[position]);
        let document_id: Cow<'_, str> = given.map_or_else(|| ids::text_id(text).into(), Cow::from);
        // Without sources, a document's source is its id (a file's resolved path: its name
        // tells a code level without a language the file's language, as the source does).
        let source = documents
            .sources
            .map_or(&*document_id, |sources| sources[position]);
        // Levels that cut HTML cut the page's readable text, which the chunks then index.
        let content = tree::page_content(levels);
        let cut = match tree::cut_document(levels, text, Some(source), content) {
            Ok(cut) => cut,
            Err(error) => {
                outcome.failures.push(Some(Failure::NotChunked(error)));
                continue;
            }
        };
        let (table, outline) = (cut.table, cut.outline);
        let text: &str = cut.page_text.as_deref().unwrap_or(text);
        let document = Document {
            text,
            source,
            document_id: &document_id,
            fingerprint: &chunkers.fingerprints[chunker],
            pages: cut.pages.as_ref(),
        };
        outcome.sizes.push_table(levels, text, &table);
        collect.document(position, &document, table, outline);
        outcome.failures.push(None);
    }
    output::recycle(file_bytes);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SplitterConfig;
    use crate::sizing::Unit;

    /// What a test collector keeps of each document.
    #[derive(Default)]
    struct Kept(Vec<(usize, String, String, String, usize)>);

    impl Collect for Kept {
        fn document(
            &mut self,
            position: usize,
            document: &Document<'_>,
            table: SpanTable,
            _outline: Option<Outline>,
        ) {
            self.0.push((
                position,
                document.text.to_owned(),
                document.source.to_owned(),
                document.document_id.to_owned(),
                table.rows(),
            ));
        }
    }

    fn levels(sizes: &[usize]) -> Vec<Arc<Splitter>> {
        sizes
            .iter()
            .map(|&size| Arc::new(Splitter::new(SplitterConfig::new(size), Unit::Char).unwrap()))
            .collect()
    }

    #[test]
    fn bytes_are_decoded_cut_and_collected_in_order_with_their_failures() {
        let text = "One sentence here. Another one there.\n\nA second paragraph.";
        let datas: Vec<&[u8]> = vec![text.as_bytes(), b"caf\xe9", b"short"];
        let sources = ["a.txt", "b.txt", "c.txt"];
        let given = [Some("doc-a"), None, None];
        let chunkers = Chunkers::new(
            vec![
                (levels(&[40, 20]), "f1".to_owned()),
                (levels(&[100]), "f2".to_owned()),
            ],
            Some(vec![0, 0, 1]),
            3,
        )
        .unwrap();
        let documents = Documents {
            inputs: Inputs::Bytes(&datas),
            sources: Some(&sources),
            ids: Some(&given),
        };
        documents.check().unwrap();
        let mut kept = Kept::default();
        let outcome = run(&chunkers, &documents, &mut kept);
        assert!(outcome.failures[0].is_none() && outcome.failures[2].is_none());
        let failure = outcome.failures[1].as_ref().unwrap();
        assert_eq!(failure.kind(), NOT_UTF8);
        assert_eq!(failure.message(), "not UTF-8 (byte 0xe9 at offset 3)");
        assert_eq!(kept.0.len(), 2);
        let (position, kept_text, source, id, rows) = &kept.0[0];
        assert_eq!(
            (*position, kept_text.as_str(), source.as_str()),
            (0, text, "a.txt")
        );
        assert_eq!(id, "doc-a");
        assert!(*rows > 2, "two levels of a 59-char text at 40 and 20 chars");
        // The third document: the second chunker's one level, its id the hash of its text.
        assert_eq!(kept.0[1].0, 2);
        assert_eq!(kept.0[1].3, ids::text_id("short"));
        assert_eq!(kept.0[1].4, 1);
        // Every chunk of both documents is measured, by level.
        assert_eq!(outcome.sizes.levels(), 2);
        let measured = outcome.sizes.count(0) + outcome.sizes.count(1);
        assert_eq!(measured, kept.0[0].4 + kept.0[1].4);
    }

    #[test]
    fn files_are_read_here_and_their_skips_said() {
        let folder = std::env::temp_dir().join(format!("spanchunk-batch-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let text = folder.join("a.txt");
        std::fs::write(&text, "héllo world\n").unwrap();
        let binary = folder.join("b.bin");
        std::fs::write(&binary, b"x\0y").unwrap();
        let paths = vec![text, binary, folder.join("missing.txt")];
        let mut kept = Kept::default();
        let outcome = run(
            &Chunkers::one(levels(&[100]), "f".to_owned(), 3),
            &Documents::new(Inputs::Files(&paths)),
            &mut kept,
        );
        let kinds: Vec<Option<&str>> = outcome
            .failures
            .iter()
            .map(|failure| failure.as_ref().map(Failure::kind))
            .collect();
        assert_eq!(kinds, [None, Some(BINARY), Some(UNREADABLE)]);
        // Without sources, a document's source is its id.
        assert_eq!(kept.0[0].1, "héllo world\n");
        assert_eq!(kept.0[0].2, kept.0[0].3);
        std::fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn settings_that_cannot_work_are_refused() {
        assert!(Chunkers::new(vec![], None, 1).is_err());
        let one = || vec![(levels(&[10]), "f".to_owned())];
        assert_eq!(
            Chunkers::new(one(), Some(vec![0]), 2).unwrap_err(),
            "2 documents and 1 chunker indexes: pass one per document"
        );
        assert_eq!(
            Chunkers::new(one(), Some(vec![1]), 1).unwrap_err(),
            "chunker index 1 out of range (1 chunkers)"
        );
        let texts = ["a", "b"];
        let documents = Documents {
            inputs: Inputs::Texts(&texts),
            sources: Some(&["a"]),
            ids: None,
        };
        assert_eq!(
            documents.check().unwrap_err(),
            "2 documents and 1 sources: pass one source per document"
        );
    }
}
