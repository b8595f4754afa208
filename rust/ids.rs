//! Deterministic ids: the same input and settings give the same ids in any process, on any
//! machine (xxh3 is specified byte for byte and independent of endianness here because every
//! integer is fed in little-endian form).

use xxhash_rust::xxh3::xxh3_64;

/// 16 hex digits identifying a text: the default document id.
#[must_use]
pub fn text_id(text: &str) -> String {
    format!("{:016x}", xxh3_64(text.as_bytes()))
}

/// 16 hex digits identifying one chunk: document id, level, byte span and the chunker's
/// fingerprint. Two identical paragraphs of one document differ in their spans, so in ids.
#[must_use]
pub fn chunk_id(
    document_id: &str,
    fingerprint: &str,
    level: u32,
    start_byte: u64,
    end_byte: u64,
) -> String {
    format!(
        "{:016x}",
        chunk_hash(document_id, fingerprint, level, start_byte, end_byte)
    )
}

/// The number a chunk id spells in hex (`chunk_id` is `{:016x}` of it): what chunk objects
/// keep until their id is first read.
#[must_use]
pub fn chunk_hash(
    document_id: &str,
    fingerprint: &str,
    level: u32,
    start_byte: u64,
    end_byte: u64,
) -> u64 {
    // One-shot xxh3 over the concatenated fields gives the same digest as feeding them to a
    // streaming hasher one by one, without its 500-byte state: ids stay as they were.
    let mut input = Vec::with_capacity(document_id.len() + fingerprint.len() + 36);
    input.extend_from_slice(&(document_id.len() as u64).to_le_bytes());
    input.extend_from_slice(document_id.as_bytes());
    input.extend_from_slice(&(fingerprint.len() as u64).to_le_bytes());
    input.extend_from_slice(fingerprint.as_bytes());
    input.extend_from_slice(&level.to_le_bytes());
    input.extend_from_slice(&start_byte.to_le_bytes());
    input.extend_from_slice(&end_byte.to_le_bytes());
    xxh3_64(&input)
}

/// The id of every row of a span table (its seven columns, `table::SPAN_COLUMNS`): a row is
/// not checked, a level out of range counts as `u32::MAX` and a negative offset as 0 (ids of
/// rows the chunkers never make, for tables made by hand).
#[must_use]
pub fn row_ids(document_id: &str, fingerprint: &str, rows: &[[i64; 7]]) -> Vec<String> {
    rows.iter()
        .map(|row| {
            chunk_id(
                document_id,
                fingerprint,
                u32::try_from(row[0]).unwrap_or(u32::MAX),
                u64::try_from(row[3]).unwrap_or(0),
                u64::try_from(row[4]).unwrap_or(0),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_distinct() {
        // Pinned: a change here breaks every stored id.
        assert_eq!(text_id(""), format!("{:016x}", xxh3_64(b"")));
        let first = chunk_id("doc", "fp", 0, 0, 10);
        assert_eq!(first.len(), 16);
        assert_eq!(first, chunk_id("doc", "fp", 0, 0, 10));
        assert_ne!(first, chunk_id("doc", "fp", 0, 10, 20));
        assert_ne!(first, chunk_id("doc", "fp", 1, 0, 10));
        assert_ne!(first, chunk_id("doc", "fq", 0, 0, 10));
        // The streaming hasher that made the first ids gives the same digest.
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&3u64.to_le_bytes());
        hasher.update(b"doc");
        hasher.update(&2u64.to_le_bytes());
        hasher.update(b"fp");
        hasher.update(&0u32.to_le_bytes());
        hasher.update(&0u64.to_le_bytes());
        hasher.update(&10u64.to_le_bytes());
        assert_eq!(first, format!("{:016x}", hasher.digest()));
        // Length prefixes keep ("ab", "c") apart from ("a", "bc").
        assert_ne!(chunk_id("ab", "c", 0, 0, 1), chunk_id("a", "bc", 0, 0, 1));
    }

    #[test]
    fn rows_are_ids() {
        assert_eq!(
            row_ids(
                "doc",
                "fp",
                &[[0, 0, -1, 0, 10, 0, 10], [-1, 0, 0, -5, 3, 0, 3]]
            ),
            [
                chunk_id("doc", "fp", 0, 0, 10),
                chunk_id("doc", "fp", u32::MAX, 0, 3)
            ]
        );
    }
}
