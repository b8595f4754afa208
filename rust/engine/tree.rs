//! Every level of a document in one call, and the one place that decides which engine cuts
//! it (`cut_levels`): the top level is cut from the document, each lower level inside every
//! chunk of the level above, by the cascades of `cascade.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rayon::prelude::*;

use super::cascade::{atom_tree, seek_tree, LevelBuffers, Scratch, Stage};
use super::plan::Splitter;
use crate::error::ChunkError;
use crate::html::{Content, Page};
use crate::ids;
use crate::markdown::Outline;
use crate::sizing::token::TextMemo;
use crate::sizing::{CharIndex, TextWords};
use crate::table::rows::{records_rows, SpanRow};
use crate::table::{SpanRecord, SpanTable};
use crate::text::chars::absent_bytes;
use crate::text::pages::Pages;
use crate::text::span::{CharCursor, Span};

/// Cuts `splitter`'s chunks inside each parent byte span, in parent order: the records of
/// one level (numbered 0), whose `parent` column is the row of the chunk's parent in
/// `parents`.
///
/// # Errors
/// A character larger than the chunk size (token sizers only), or the sizer failed.
pub fn level_spans(
    splitter: &Splitter,
    text: &str,
    parents: &[(usize, usize)],
) -> Result<Vec<SpanRecord>, ChunkError> {
    let _memo = TextMemo::start();
    let _words = splitter
        .sizer()
        .counts_words()
        .then(|| TextWords::start(text));
    let mut cursor = CharCursor::new(text);
    let absent = absent_bytes(text, splitter.check_bytes(text.len()));
    let outline = splitter.outline(text, None);
    let chars = splitter
        .sizer()
        .counts_chars()
        .then(|| CharIndex::new(text));
    let mut stage =
        Stage::alone(splitter.prepare_without(&absent, outline.as_ref(), chars.as_ref()));
    for &(start_byte, end_byte) in parents {
        let parent = Span {
            start_byte,
            end_byte,
            start_char: cursor.char_at(start_byte),
            end_char: 0,
        };
        stage.cut(text, parent, &[], None)?;
    }
    Ok(stage.into_records())
}

/// All levels of `text`: `levels[0]` cuts the document and is numbered `levels.len() - 1`;
/// each following splitter cuts inside the spans of the one before; the last is level 0.
///
/// # Errors
/// A character larger than the chunk size (token sizers only), or the sizer failed.
pub fn tree_spans(levels: &[&Splitter], text: &str) -> Result<SpanTable, ChunkError> {
    tree_spans_outlined(levels, text).map(|(table, _)| table)
}

/// [`tree_spans`], and the text's Markdown outline when a level is Markdown (parsed once for
/// every level, and returned for the chunks' heading paths).
///
/// # Errors
/// A character larger than the chunk size (token sizers only), or the sizer failed.
pub fn tree_spans_outlined(
    levels: &[&Splitter],
    text: &str,
) -> Result<(SpanTable, Option<Outline>), ChunkError> {
    cut_tree(levels, text, true, None, None)
}

/// [`tree_spans_outlined`] of a document whose source (a file name) is `source`: a code
/// level given no language reads it from the name's ending.
///
/// # Errors
/// A character larger than the chunk size (token sizers only), or the sizer failed.
pub fn tree_spans_sourced(
    levels: &[&Splitter],
    text: &str,
    source: Option<&str>,
) -> Result<(SpanTable, Option<Outline>), ChunkError> {
    cut_tree(levels, text, true, source, None)
}

/// [`tree_spans`] by the atom engine alone, never by seeking: the reference that seeking is
/// tested against, and the engine's own benchmark.
///
/// # Errors
/// A character larger than the chunk size (token sizers only), or the sizer failed.
pub fn tree_spans_by_atoms(levels: &[&Splitter], text: &str) -> Result<SpanTable, ChunkError> {
    cut_tree(levels, text, false, None, None).map(|(table, _)| table)
}

/// [`tree_spans_outlined`], seeking when `seek` and [`cut_levels`] allow it; `given`: the
/// text's outline when it comes with the text. Levels that cut HTML cut the page's readable
/// text (see [`cut_document`]).
fn cut_tree(
    levels: &[&Splitter],
    text: &str,
    seek: bool,
    source: Option<&str>,
    given: Option<Outline>,
) -> Result<(SpanTable, Option<Outline>), ChunkError> {
    if given.is_none() {
        if let Some(content) = page_content(levels) {
            let cut = cut_document(levels, text, source, Some(content))?;
            return Ok((cut.table, cut.outline));
        }
    }
    check_levels(levels)?;
    // Token sizers keep each merged piece's count for the whole text, every level.
    let _memo = TextMemo::start();
    let _words = levels
        .iter()
        .any(|level| level.sizer().counts_words())
        .then(|| TextWords::start(text));
    // One parse for every level: the structure of the first level that has one.
    let outline = given.or_else(|| {
        levels
            .iter()
            .find(|level| level.is_structured())
            .and_then(|level| level.outline(text, source))
    });
    let table = Scratch::with(|scratch| cut_levels(levels, text, seek, outline.as_ref(), scratch))?;
    Ok((table, outline))
}

/// One document cut by every level ([`cut_document`]).
#[derive(Debug)]
pub struct DocumentCut {
    /// The chunks of every level.
    pub table: SpanTable,
    /// Its outline, when a level is Markdown, code or HTML.
    pub outline: Option<Outline>,
    /// The readable text the table indexes, when the document was an HTML page.
    pub page_text: Option<String>,
    /// Its pages, when the levels mark pages and the document has page markers.
    pub pages: Option<Pages>,
}

/// A document cut by every level: with `content` (levels that cut HTML), the page `text` is
/// read first and its readable text is cut, and returned with the table its rows index. The
/// page markers of the top level give the document's pages (in a page's
/// source, moved into its readable text).
///
/// # Errors
/// A character larger than the chunk size (token sizers only), the sizer failed, or the page
/// marker pattern gave up on the text.
pub fn cut_document(
    levels: &[&Splitter],
    text: &str,
    source: Option<&str>,
    content: Option<Content>,
) -> Result<DocumentCut, ChunkError> {
    let pattern = levels
        .first()
        .and_then(|level| level.config().pages.as_ref());
    if let Some(content) = content {
        let page = Page::parse(text, content);
        let (table, outline) = cut_tree(levels, &page.text, true, None, Some(page.outline))?;
        let pages = match (
            pattern,
            outline.as_ref().and_then(|o| o.source_map.as_ref()),
        ) {
            (Some(pattern), Some(map)) => pattern.find_in_comments(text, &page.comments, map)?,
            _ => None,
        };
        return Ok(DocumentCut {
            table,
            outline,
            page_text: Some(page.text),
            pages,
        });
    }
    let (table, outline) = cut_tree(levels, text, true, source, None)?;
    let pages = document_pages(levels.first().copied(), text)?;
    Ok(DocumentCut {
        table,
        outline,
        page_text: None,
        pages,
    })
}

/// The pages of `text` by the page markers of `top`, the top level (None: no pages).
///
/// # Errors
/// The pattern gave up on the text.
pub fn document_pages(top: Option<&Splitter>, text: &str) -> Result<Option<Pages>, ChunkError> {
    match top.and_then(|level| level.config().pages.as_ref()) {
        Some(pattern) => pattern.find(text),
        None => Ok(None),
    }
}

/// Cuts every level of `text` by seeking where that gives the atom engine's chunks, by
/// atoms otherwise: the one choice between the two engines.
///
/// The two engines give identical tables (every chunk of every level, its byte and char
/// span, its index and its parent) exactly when both of these hold:
/// 1. every level is [`Splitter::seekable`]: sizes in chars, `trim` on, no overlap,
///    `min_chunk_size` 0, plain text (no Markdown structure), `keep_separator` "end" or
///    "none" (not "start"), and every separator level searched pattern by pattern (at most
///    eight patterns) with separators that cannot overlap one another (`plan::cannot_overlap`:
///    every occurrence is then a match of the forward search) or that are all whitespace
///    (overlapping matches then only move a cut inside whitespace, which trimming removes);
/// 2. no piece of the text has to be cut by graphemes (a piece larger than the chunk size
///    with none of its level's separators in it).
///
/// Under 1 a chunk is the longest run of atoms from its start whose char count fits, so its
/// end is the last atom end at or before the char `chunk_size` past its start: seeking finds
/// that end from the char back to the nearest separator, without making the atoms. Where 1
/// holds (and `seek`, false for [`tree_spans_by_atoms`]) the text is first checked for any
/// separator byte at all (a text that can hold none is cut by graphemes, so by atoms, at
/// once); seeking then gives up ([`super::seek::Unseekable`]) on the first piece that breaks
/// 2, and the atom engine cuts the whole text instead. `tests/test_seek.py` and the tests
/// below compare the two engines over the corpus and random texts.
fn cut_levels(
    levels: &[&Splitter],
    text: &str,
    seek: bool,
    outline: Option<&Outline>,
    scratch: &mut Scratch,
) -> Result<SpanTable, ChunkError> {
    let Scratch {
        chars,
        lines,
        masks,
        levels: buffers,
    } = scratch;
    // Separator bytes the text lacks, checked once for every level.
    let mut check: Vec<u8> = levels
        .iter()
        .flat_map(|level| level.check_bytes(text.len()).iter().copied())
        .collect();
    check.sort_unstable();
    check.dedup();
    let counts_chars = levels.iter().any(|level| level.sizer().counts_chars());
    if counts_chars {
        chars.rebuild(text);
    }
    if buffers.len() < levels.len() {
        buffers.resize_with(levels.len(), LevelBuffers::default);
    }
    // Condition 1 (Markdown levels are never seekable; the outline says one is there).
    let seekable = seek && outline.is_none() && levels.iter().all(|level| level.seekable());
    // A seeking cut reads the text once more, for its line feeds; that pass also tells
    // which separator bytes the text lacks, unless common ones are checked (long texts:
    // checked first, and a text that can hold no separator at all is cut by graphemes,
    // so not by seeking; 10 / 20 MB of "x" paid for a line-feed pass for nothing).
    let common = !check.iter().all(|&byte| byte == b'\r' || !byte.is_ascii());
    let checked = common.then(|| absent_bytes(text, &check));
    let seekable = seekable
        && checked.as_ref().is_none_or(|absent| {
            levels
                .iter()
                .any(|level| level.masks_without(absent).iter().any(|&mask| mask != 0))
        });
    let facts = if seekable { lines.rebuild(text) } else { None };
    let absent = match (checked, facts) {
        (Some(absent), _) => absent,
        (None, Some(facts)) => facts.absent(text, &check),
        (None, None) => absent_bytes(text, &check),
    };
    if seekable {
        // Condition 2 is only known by trying.
        if let Ok(table) = seek_tree(levels, text, &absent, chars, lines, masks, buffers) {
            return Ok(table);
        }
    }
    let chars = counts_chars.then_some(&*chars);
    atom_tree(levels, text, &absent, outline, chars, buffers)
}

/// Refuses overlapping parents: children of two overlapping parents would repeat each other
/// and break document order within their level. Only the leaves may overlap.
///
/// # Errors
/// An upper level with a non-zero overlap.
pub fn check_levels(levels: &[&Splitter]) -> Result<(), ChunkError> {
    let upper = levels.len().saturating_sub(1);
    if let Some(level) = levels[..upper]
        .iter()
        .find(|level| level.config().overlap > 0)
    {
        return Err(ChunkError::setting(
            "overlap",
            format!(
                "parent levels must not overlap (got overlap {}): children of overlapping parents would repeat; set the parent overlap to 0 and give the overlap to the leaf level",
                level.config().overlap
            ),
        ));
    }
    Ok(())
}

/// [`tree_spans`] for many texts on a pool of `workers` threads (`None`: all cores), in input
/// order.
///
/// # Errors
/// The first failing text's error, or a pool that cannot start.
pub fn tree_spans_many(
    levels: &[&Splitter],
    texts: &[&str],
    workers: Option<usize>,
) -> Result<Vec<SpanTable>, ChunkError> {
    let tables = tree_spans_outlined_many(levels, texts, workers)?;
    Ok(tables.into_iter().map(|(table, _)| table).collect())
}

/// [`tree_spans_outlined`] for many texts on a pool of `workers` threads (`None`: all cores),
/// in input order.
///
/// # Errors
/// The first failing text's error, or a pool that cannot start.
pub fn tree_spans_outlined_many(
    levels: &[&Splitter],
    texts: &[&str],
    workers: Option<usize>,
) -> Result<Vec<(SpanTable, Option<Outline>)>, ChunkError> {
    check_levels(levels)?;
    let run = || {
        texts
            .par_iter()
            // One document per task: documents differ in size by 1000x (a book and a
            // chapter), and rayon's default halving can leave one core with every book.
            .with_max_len(1)
            .map(|text| tree_spans_outlined(levels, text))
            .collect::<Result<Vec<_>, _>>()
    };
    match workers {
        None => Ok(run()?),
        Some(threads) => Ok(pool(threads)?.install(run)?),
    }
}

/// Panics with `message`, on the calling thread (`workers == 0`) or on one of the engine's
/// `workers` pool threads: the test hook behind the bindings' `_panic_for_tests`, which pins
/// that a panic in the core reaches Python as an exception, never an abort.
///
/// # Errors
/// The pool cannot start.
///
/// # Panics
/// Always: that is its purpose.
pub fn panic_for_tests(message: &str, workers: usize) -> Result<(), ChunkError> {
    assert!(workers > 0, "{message}");
    pool(workers)?.install(|| {
        (0..workers)
            .into_par_iter()
            .for_each(|task| assert!(task + 1 < workers, "{message}"));
    });
    Ok(())
}

/// The thread pool of `threads` workers, started on first use and kept: a pool per call
/// cost its start, and its threads' warm state (a tokenizer's regex caches, see
/// `sizing/token/`) with it.
fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, ChunkError> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let threads = threads.max(1);
    let mut pools = POOLS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|error| {
            ChunkError::setting(
                "workers",
                format!("cannot start {threads} worker threads: {error}"),
            )
        })?;
    let pool = Arc::new(pool);
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

/// What one document's chunking gives the bindings, computed with the GIL released: its
/// checked rows, its outline (Markdown or code levels), and its default id when none was
/// given.
#[derive(Debug)]
pub struct ChunkedDocument {
    /// The rows of its span table, checked.
    pub rows: Vec<SpanRow>,
    /// Its outline, when a level is Markdown or code.
    pub outline: Option<Outline>,
    /// Its default id (`ids::text_id`), when none was given.
    pub made_key: Option<String>,
    /// The readable text its rows index, when the document was an HTML page.
    pub page_text: Option<String>,
    /// Its pages, when its levels mark pages and it has page markers.
    pub pages: Option<Pages>,
}

/// One document to chunk: its text, its length in chars, its id when one was given, and its
/// source when it has one (a code level given no language reads it from there).
pub type DocumentInput<'a> = (&'a str, usize, Option<&'a str>, Option<&'a str>);

/// The part of a page that is text when `levels` cut HTML (the first HTML level's), else
/// None: each document is then a page's source, cut as its readable text.
#[must_use]
pub fn page_content(levels: &[&Splitter]) -> Option<Content> {
    levels
        .iter()
        .find_map(|level| level.config().structure.html_content())
}

/// Every level of each document, on `workers` threads (1: this thread; `None`: every core),
/// in input order, with the rows checked and a default id made where none was given.
///
/// # Errors
/// The first failing document's error, a pool that cannot start, or a bad row.
pub fn chunked_documents(
    levels: &[&Splitter],
    documents: &[DocumentInput<'_>],
    workers: Option<usize>,
) -> Result<Vec<ChunkedDocument>, ChunkError> {
    check_levels(levels)?;
    let content = page_content(levels);
    let cut =
        |&(text, _, _, source): &DocumentInput<'_>| cut_document(levels, text, source, content);
    let tables = if workers == Some(1) {
        documents.iter().map(cut).collect::<Result<Vec<_>, _>>()?
    } else {
        let run = || {
            documents
                .par_iter()
                .with_max_len(1)
                .map(cut)
                .collect::<Result<Vec<_>, _>>()
        };
        match workers {
            None => run()?,
            Some(threads) => pool(threads)?.install(run)?,
        }
    };
    tables
        .into_iter()
        .zip(documents)
        .map(|(cut, &(text, chars, key, _))| {
            let chars = cut
                .page_text
                .as_deref()
                .map_or(chars, |page_text| page_text.chars().count());
            Ok(ChunkedDocument {
                rows: records_rows(&cut.table.records, chars)?,
                outline: cut.outline,
                made_key: key.is_none().then(|| ids::text_id(text)),
                page_text: cut.page_text,
                pages: cut.pages,
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
mod tests {
    use super::*;
    use crate::engine::cascade::{seek_tree, LevelBuffers};
    use crate::engine::SplitterConfig;
    use crate::sizing::{CharIndex, SizeError, Unit};
    use crate::text::chars::absent_bytes;
    use crate::text::lines::LineMask;

    /// Texts of every kind of piece the seek handles: paragraphs, lines, sentences, clauses,
    /// words, CR LF, Unicode whitespace, invisible chars, CJK punctuation, blank runs of
    /// every length.
    fn seek_texts() -> Vec<String> {
        let pieces = [
            "word ",
            "longer words here",
            ". ",
            "! ",
            "\n",
            "\n\n",
            "\n\n\n",
            "\r\n",
            "\r\n\r\n",
            "中文字",
            "。",
            "，",
            "\u{3000}",
            "\u{a0}",
            "\u{2028}",
            ", ",
            "; ",
            "é",
            "😀",
            "\t",
            "\u{200b}",
            "\u{feff}\u{200d}",
        ];
        let mut seed = 7_u64;
        let mut texts = vec![String::new(), " \n ".to_owned(), "a".to_owned()];
        for _ in 0..400 {
            let mut text = String::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            for step in 0..(seed % 200) {
                let pick = (seed.rotate_left((step % 60) as u32) % pieces.len() as u64) as usize;
                text.push_str(pieces[pick]);
            }
            texts.push(text);
        }
        texts
    }

    #[test]
    fn seeking_cuts_as_the_atom_engine() {
        let mut sought = 0;
        for sizes in [[2000, 400], [60, 20], [25, 8], [9, 4]] {
            let splitters: Vec<Splitter> = sizes.iter().map(|&size| splitter(size)).collect();
            let levels: Vec<&Splitter> = splitters.iter().collect();
            assert!(levels.iter().all(|level| level.seekable()));
            for text in seek_texts() {
                let by_atoms = tree_spans_by_atoms(&levels, &text).unwrap();
                assert_eq!(tree_spans(&levels, &text).unwrap(), by_atoms, "{text:?}");
                // The comparison is only worth something where seeking did cut.
                let absent = absent_bytes(&text, &[]);
                let (chars, mut lines) = (CharIndex::new(&text), LineMask::default());
                let _ = lines.rebuild(&text);
                let mut buffers: Vec<LevelBuffers> =
                    levels.iter().map(|_| LevelBuffers::default()).collect();
                if let Ok(table) = seek_tree(
                    &levels,
                    &text,
                    &absent,
                    &chars,
                    &lines,
                    &mut Vec::new(),
                    &mut buffers,
                ) {
                    assert_eq!(table, by_atoms);
                    sought += 1;
                }
            }
        }
        assert!(sought > 1000, "only {sought} texts were cut by seeking");
    }

    fn splitter(chunk_size: usize) -> Splitter {
        Splitter::new(SplitterConfig::new(chunk_size), Unit::Char).unwrap()
    }

    /// Chars, except that "é" weighs 5: a child level of 3 cannot hold it.
    #[derive(Debug)]
    struct Heavy;

    impl crate::Sizer for Heavy {
        fn size(&self, text: &str) -> Result<usize, SizeError> {
            Ok(text
                .chars()
                .map(|character| if character == 'é' { 5 } else { 1 })
                .sum())
        }

        fn is_additive(&self) -> bool {
            true
        }

        fn name(&self) -> &'static str {
            "heavy"
        }
    }

    #[test]
    fn an_error_below_stops_the_tree_and_the_next_text_is_cut_anew() {
        let parent = Splitter::with_sizer(SplitterConfig::new(40), Box::new(Heavy)).unwrap();
        let child = Splitter::with_sizer(SplitterConfig::new(3), Box::new(Heavy)).unwrap();
        assert!(child.shares_pieces_with(&parent));
        for levels in [vec![&parent, &child], vec![&parent, &parent, &child]] {
            let error = tree_spans(&levels, "ab cd\n\nef é gh\n\nij kl").unwrap_err();
            assert!(
                matches!(
                    error,
                    ChunkError::Unsplittable {
                        character: 'é',
                        position: 10,
                        size: 5,
                        chunk_size: 3
                    }
                ),
                "{error:?}"
            );
            // The buffers the failed cut held are back and empty for the next text.
            let table = tree_spans(&levels, "ab cd").unwrap();
            let texts: Vec<(i64, &str)> = table
                .records
                .iter()
                .map(|record| {
                    (
                        record.0[0],
                        &"ab cd"[record.0[3] as usize..record.0[4] as usize],
                    )
                })
                .collect();
            let top = i64::try_from(levels.len()).unwrap() - 1;
            let mut expected = vec![(top, "ab cd")];
            if top == 2 {
                expected.push((1, "ab cd"));
            }
            expected.extend([(0, "ab"), (0, "cd")]);
            assert_eq!(texts, expected);
        }
    }

    #[test]
    fn two_levels_nest() {
        let text = "é one two three\n\nfour five six seven";
        let (parent, child) = (splitter(20), splitter(8));
        let table = tree_spans(&[&parent, &child], text).unwrap();
        let rows: Vec<[i64; 7]> = table.records.iter().map(|record| record.0).collect();
        let texts: Vec<(i64, &str)> = rows
            .iter()
            .map(|row| (row[0], &text[row[3] as usize..row[4] as usize]))
            .collect();
        assert_eq!(
            texts,
            [
                (1, "é one two three"),
                (1, "four five six seven"),
                (0, "é one"),
                (0, "two"),
                (0, "three"),
                (0, "four"),
                (0, "five six"),
                (0, "seven")
            ]
        );
        // parent column: index of the parent row within level 1
        let parents: Vec<i64> = rows.iter().map(|row| row[2]).collect();
        assert_eq!(parents, [-1, -1, 0, 0, 0, 1, 1, 1]);
        // char offsets: "é" is 2 bytes, one char
        assert_eq!((rows[2][5], rows[2][6]), (0, 5));
        assert_eq!((rows[1][5], rows[1][6]), (17, 36));
    }

    #[test]
    fn invisible_pieces_are_no_chunks() {
        // A BOM, zero-width spaces, a lone ZWJ and a word joiner carry no content: a piece
        // of only them is no chunk, at any level, and trimming takes them off chunk edges.
        let text = "\u{feff}one two\u{200b}\n\n\u{200b}\u{200d}\u{2060}\n\nthree\u{200d}";
        let (parent, child) = (splitter(12), splitter(5));
        for levels in [vec![&parent], vec![&parent, &child]] {
            for table in [
                tree_spans(&levels, text).unwrap(),
                tree_spans_by_atoms(&levels, text).unwrap(),
            ] {
                let texts: Vec<(i64, &str)> = table
                    .records
                    .iter()
                    .map(|record| {
                        (
                            record.0[0],
                            &text[record.0[3] as usize..record.0[4] as usize],
                        )
                    })
                    .collect();
                let top = i64::try_from(levels.len()).unwrap() - 1;
                let mut expected = vec![(top, "one two"), (top, "three")];
                if levels.len() == 2 {
                    expected.extend([(0, "one"), (0, "two"), (0, "three")]);
                }
                assert_eq!(texts, expected);
            }
        }
        for only in [
            "\u{feff}",
            "\u{200b}\u{200b}",
            "\u{200d}",
            " \u{2060}\n\u{feff} ",
        ] {
            assert_eq!(
                tree_spans(&[&parent, &child], only).unwrap().rows(),
                0,
                "{only:?}"
            );
        }
        // trim=False keeps a chunk's edges as they are, but a blank piece is still none.
        let mut config = SplitterConfig::new(12);
        config.trim = false;
        let untrimmed = Splitter::new(config, Unit::Char).unwrap();
        let table = tree_spans(&[&untrimmed], "\u{200b}\u{200b}").unwrap();
        assert_eq!(table.rows(), 0);
        // A ZWJ inside an emoji sequence is content of the grapheme it joins.
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        let table = tree_spans(&[&splitter(12)], family).unwrap();
        assert_eq!(
            table.records[0].0[3..5],
            [0, i64::try_from(family.len()).unwrap()]
        );
    }

    #[test]
    fn parent_that_fits_gets_one_child() {
        let text = "  short  ";
        let table = tree_spans(&[&splitter(100), &splitter(50)], text).unwrap();
        assert_eq!(table.rows(), 2);
        assert_eq!(table.records[0].0[3..5], table.records[1].0[3..5]);
    }

    #[test]
    fn many_matches_one_by_one() {
        let (parent, child) = (splitter(30), splitter(10));
        let texts = ["a b c d e f g h i j k l m n o p", "", "x\n\ny"];
        let many = tree_spans_many(&[&parent, &child], &texts, Some(2)).unwrap();
        for (text, table) in texts.iter().zip(many) {
            assert_eq!(table, tree_spans(&[&parent, &child], text).unwrap());
        }
    }
}

/// Readable snapshots of whole trees over the tests' own texts (`tests/data/texts/`): one line
/// per chunk (level, index, parent row, byte and char spans, the text's start), so that a
/// change to where chunks end shows as a diff of those lines. `cargo insta review` (or
/// `INSTA_UPDATE=always cargo test`) accepts a change made on purpose.
#[cfg(test)]
mod snapshots {
    use std::fmt::Write as _;

    use super::tree_spans;
    use crate::engine::{Splitter, SplitterConfig, Structure};
    use crate::sizing::Unit;

    fn listing(levels: &[&Splitter], text: &str) -> String {
        let table = tree_spans(levels, text).unwrap();
        let mut out = String::new();
        for record in &table.records {
            let [level, index, parent, start_byte, end_byte, start_char, end_char] = record.0;
            let from = usize::try_from(start_byte).unwrap();
            let to = usize::try_from(end_byte).unwrap();
            let head: String = text[from..to].chars().take(32).collect();
            writeln!(
                out,
                "{level} {index:>3} ^{parent:<3} b{start_byte}..{end_byte} c{start_char}..{end_char} {head:?}"
            )
            .unwrap();
        }
        out
    }

    fn level(chunk_size: usize, structure: Structure) -> Splitter {
        let mut config = SplitterConfig::new(chunk_size);
        config.structure = structure;
        Splitter::new(config, Unit::Char).unwrap()
    }

    #[test]
    fn parents_and_children_of_the_test_texts() {
        let parents = level(600, Structure::Plain);
        let children = level(150, Structure::Plain);
        for (name, text) in [
            ("prose", include_str!("../../tests/data/texts/prose.txt")),
            ("zh", include_str!("../../tests/data/texts/zh.md")),
        ] {
            insta::assert_snapshot!(
                format!("plain_{name}"),
                listing(&[&parents, &children], text)
            );
        }
    }

    #[test]
    fn markdown_sections_as_parents() {
        let parents = level(500, Structure::Markdown);
        let children = level(120, Structure::Markdown);
        let text = include_str!("../../tests/data/texts/guide.md");
        insta::assert_snapshot!("markdown_guide", listing(&[&parents, &children], text));
    }
}
