//! Deterministic ids: the same input and settings give the same ids in any process, on any
//! machine (xxh3 is specified byte for byte and independent of endianness here because every
//! integer is fed in little-endian form).
//!
//! A chunk id follows the chunk's text: it hashes the document id, the chunker's
//! fingerprint, the level, the hash of the chunk's text, and how many chunks of the same
//! level and the same text come before it in the document (0 for nearly every chunk: the
//! count only tells identical paragraphs of one document apart). No offset goes in, so an
//! edit elsewhere in a document, which moves a chunk but leaves its text alone, leaves its id
//! alone; an edit of its text gives it a new id.

use rustc_hash::FxHashMap;
use xxhash_rust::xxh3::xxh3_64;

/// 16 hex digits identifying a text: the default document id.
#[must_use]
pub fn text_id(text: &str) -> String {
    format!("{:016x}", xxh3_64(text.as_bytes()))
}

/// 16 hex digits identifying one chunk (see [`chunk_hash`]).
#[must_use]
pub fn chunk_id(
    document_id: &str,
    fingerprint: &str,
    level: u32,
    text: &[u8],
    occurrence: u64,
) -> String {
    format!(
        "{:016x}",
        chunk_hash(document_id, fingerprint, level, xxh3_64(text), occurrence)
    )
}

/// The number a chunk id spells in hex (`chunk_id` is `{:016x}` of it): its document id,
/// the chunker's fingerprint, its level, `text_hash` (xxh3-64 of its text's UTF-8 bytes) and
/// `occurrence`, the number of chunks of its document and level with the same text before it.
#[must_use]
pub fn chunk_hash(
    document_id: &str,
    fingerprint: &str,
    level: u32,
    text_hash: u64,
    occurrence: u64,
) -> u64 {
    let mut input = Vec::with_capacity(document_id.len() + fingerprint.len() + 36);
    input.extend_from_slice(&(document_id.len() as u64).to_le_bytes());
    input.extend_from_slice(document_id.as_bytes());
    input.extend_from_slice(&(fingerprint.len() as u64).to_le_bytes());
    input.extend_from_slice(fingerprint.as_bytes());
    input.extend_from_slice(&level.to_le_bytes());
    input.extend_from_slice(&text_hash.to_le_bytes());
    input.extend_from_slice(&occurrence.to_le_bytes());
    xxh3_64(&input)
}

/// The ids of one document's chunks, given in the table's order (levels grouped, each in
/// document order): each chunk's level and byte span in `text`. A span outside the text, or
/// not on char boundaries, hashes the bytes it holds (rows of tables made by hand).
#[must_use]
pub fn document_ids(
    text: &str,
    document_id: &str,
    fingerprint: &str,
    rows: impl ExactSizeIterator<Item = (u32, usize, usize)>,
) -> Vec<u64> {
    let bytes = text.as_bytes();
    let mut ids = Vec::with_capacity(rows.len());
    // How many chunks of each (level, text hash) came before.
    let mut seen: FxHashMap<(u32, u64), u64> =
        FxHashMap::with_capacity_and_hasher(ids.capacity(), rustc_hash::FxBuildHasher);
    // The document id and fingerprint are hashed into every id: the input's prefix is
    // written once, and each chunk's fields after it.
    let mut input = Vec::with_capacity(document_id.len() + fingerprint.len() + 36);
    input.extend_from_slice(&(document_id.len() as u64).to_le_bytes());
    input.extend_from_slice(document_id.as_bytes());
    input.extend_from_slice(&(fingerprint.len() as u64).to_le_bytes());
    input.extend_from_slice(fingerprint.as_bytes());
    let prefix = input.len();
    for (level, start, end) in rows {
        let end = end.min(bytes.len());
        let text_hash = xxh3_64(bytes.get(start.min(end)..end).unwrap_or_default());
        let count = seen.entry((level, text_hash)).or_insert(0);
        let occurrence = *count;
        *count += 1;
        input.truncate(prefix);
        input.extend_from_slice(&level.to_le_bytes());
        input.extend_from_slice(&text_hash.to_le_bytes());
        input.extend_from_slice(&occurrence.to_le_bytes());
        ids.push(xxh3_64(&input));
    }
    ids
}

/// The id of every row of a span table of `text` (its seven columns, `table::SPAN_COLUMNS`):
/// a row is not checked, a level out of range counts as `u32::MAX` and a negative offset as
/// 0 (ids of rows the chunkers never make, for tables made by hand).
#[must_use]
pub fn row_ids(text: &str, document_id: &str, fingerprint: &str, rows: &[[i64; 7]]) -> Vec<String> {
    document_ids(
        text,
        document_id,
        fingerprint,
        rows.iter().map(|row| {
            (
                u32::try_from(row[0]).unwrap_or(u32::MAX),
                usize::try_from(row[3]).unwrap_or(0),
                usize::try_from(row[4]).unwrap_or(0),
            )
        }),
    )
    .into_iter()
    .map(|id| format!("{id:016x}"))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        // Pinned: a change here breaks every stored id.
        assert_eq!(text_id(""), format!("{:016x}", xxh3_64(b"")));
        let first = chunk_id("doc", "fp", 0, b"hello", 0);
        assert_eq!(first, "b40ec139011b9c93");
        assert_eq!(first, chunk_id("doc", "fp", 0, b"hello", 0));
        assert_ne!(first, chunk_id("doc", "fp", 0, b"hello", 1));
        assert_ne!(first, chunk_id("doc", "fp", 0, b"hellO", 0));
        assert_ne!(first, chunk_id("doc", "fp", 1, b"hello", 0));
        assert_ne!(first, chunk_id("doc", "fq", 0, b"hello", 0));
        assert_ne!(first, chunk_id("dod", "fp", 0, b"hello", 0));
        // Length prefixes keep ("ab", "c") apart from ("a", "bc").
        assert_ne!(
            chunk_id("ab", "c", 0, b"x", 0),
            chunk_id("a", "bc", 0, b"x", 0)
        );
    }

    #[test]
    fn ids_follow_the_text_not_its_place() {
        let before = "one\n\ntwo\n\nthree";
        let after = "zero\n\none\n\ntwo\n\nthree";
        let ids = |text: &str, spans: &[(usize, usize)]| {
            document_ids(text, "d", "f", spans.iter().map(|&(s, e)| (0, s, e)))
        };
        let old = ids(before, &[(0, 3), (5, 8), (10, 15)]);
        let new = ids(after, &[(0, 4), (6, 9), (11, 14), (16, 21)]);
        assert_eq!(&new[1..], &old[..]);
        assert_eq!(old[0], chunk_hash("d", "f", 0, xxh3_64(b"one"), 0));
    }

    #[test]
    fn identical_texts_are_numbered_by_level() {
        let text = "same\n\nsame\n\nsame";
        let rows = [(1, 0, 16), (0, 0, 4), (0, 6, 10), (0, 12, 16)];
        let ids = document_ids(text, "d", "f", rows.into_iter());
        assert_eq!(ids[1], chunk_hash("d", "f", 0, xxh3_64(b"same"), 0));
        assert_eq!(ids[2], chunk_hash("d", "f", 0, xxh3_64(b"same"), 1));
        assert_eq!(ids[3], chunk_hash("d", "f", 0, xxh3_64(b"same"), 2));
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 4);
    }

    #[test]
    fn rows_are_ids() {
        let text = "0123456789";
        assert_eq!(
            row_ids(
                text,
                "doc",
                "fp",
                &[
                    [0, 0, -1, 0, 10, 0, 10],
                    [-1, 0, 0, -5, 3, 0, 3],
                    [0, 1, 0, 8, 99, 8, 99]
                ]
            ),
            [
                chunk_id("doc", "fp", 0, b"0123456789", 0),
                chunk_id("doc", "fp", u32::MAX, b"012", 0),
                chunk_id("doc", "fp", 0, b"89", 0),
            ]
        );
    }
}
