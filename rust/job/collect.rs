//! What a batch's cut documents become (`job::batch::Collect`): the command line's JSON Lines
//! records, its Parquet row group, Ray's Arrow rows, or the store's rows.

use arrow_array::StructArray;
use parquet::errors::ParquetError;

use super::batch::Collect;
use crate::markdown::Outline;
use crate::output::columns::{self, Columns};
use crate::output::parquet::{self as chunk_parquet, EncodedGroup, Encoder, GroupEncoder};
use crate::output::{self, jsonl, Document};
use crate::store::StoreColumns;
use crate::table::SpanTable;

/// The JSON Lines records of every document, in order.
#[derive(Debug)]
pub struct JsonlRecords {
    /// The records' bytes (an `output::buffer`: hand it back with `output::recycle`).
    pub records: Vec<u8>,
}

impl JsonlRecords {
    /// Records for documents of about `expected_bytes` of text.
    #[must_use]
    pub fn new(expected_bytes: usize) -> Self {
        // JSON Lines run at about 3.2x the text (parents and children repeat it, plus keys):
        // reserved once (pages not written are never touched), not grown record by record.
        Self {
            records: output::buffer(expected_bytes.saturating_mul(7) / 2),
        }
    }
}

impl Collect for JsonlRecords {
    fn document(
        &mut self,
        _position: usize,
        document: &Document<'_>,
        table: SpanTable,
        outline: Option<Outline>,
    ) {
        jsonl::write_document(&mut self.records, document, &table, outline.as_ref());
    }
}

/// Chunk text gathered before it is handed to the Parquet encoder: small enough to be
/// copied into pages and compressed while it is still in the cache.
const ENCODE_BYTES: usize = 1 << 20;

/// Every document's chunks as one Parquet row group, encoded a slice at a time.
#[derive(Debug)]
pub struct ParquetRows<'a> {
    group: Result<GroupEncoder, ParquetError>,
    /// The rows gathered since the last slice was encoded.
    rows: ArrowRows,
    /// The source of each position.
    sources: &'a [&'a str],
}

impl<'a> ParquetRows<'a> {
    /// A row group of `encoder`'s file for documents from `sources` (one per document).
    #[must_use]
    pub fn new(encoder: &Encoder, sources: &'a [&'a str]) -> Self {
        Self {
            group: GroupEncoder::new(encoder),
            rows: ArrowRows::new(sources.len()),
            sources,
        }
    }

    /// Hands the rows gathered so far to the encoder.
    fn encode(&mut self) {
        let Ok(encoder) = self.group.as_mut() else {
            return;
        };
        let columns = std::mem::take(&mut self.rows.columns);
        let ids = as_strs(&self.rows.ids);
        let repeated = [
            columns::repeated_strings(&ids, &columns.document),
            columns::repeated_strings(self.sources, &columns.document),
        ];
        if let Err(error) = encoder.write(columns, repeated) {
            self.group = Err(error);
        }
    }

    /// The encoded row group.
    ///
    /// # Errors
    /// The encoder failed (an offset past its column's type).
    pub fn finish(mut self) -> Result<EncodedGroup, ParquetError> {
        self.encode();
        self.group?.finish()
    }
}

impl Collect for ParquetRows<'_> {
    fn document(
        &mut self,
        position: usize,
        document: &Document<'_>,
        table: SpanTable,
        outline: Option<Outline>,
    ) {
        self.rows.document(position, document, table, outline);
        if self.rows.columns.text.len() >= ENCODE_BYTES {
            self.encode();
        }
    }
}

/// Every document's chunks as Arrow rows (the Parquet columns plus `metadata`), each
/// document's rows in pre-order: what Ray's batch function hands to pyarrow.
#[derive(Debug, Default)]
pub struct ArrowRows {
    columns: Columns,
    /// The document id of each position (empty where the document failed).
    ids: Vec<String>,
}

impl ArrowRows {
    /// Rows for `documents` documents.
    #[must_use]
    pub fn new(documents: usize) -> Self {
        Self {
            columns: Columns::default(),
            ids: vec![String::new(); documents],
        }
    }

    /// The rows as one struct array, each row's source and metadata its document's
    /// (`sources` and `metadata`: one per document).
    ///
    /// # Errors
    /// An offset past what a column's type holds.
    pub fn finish(
        self,
        sources: &[Option<&str>],
        metadata: &[&str],
    ) -> Result<StructArray, ParquetError> {
        let ids = as_strs(&self.ids);
        chunk_parquet::rows_with_metadata(self.columns, &ids, sources, metadata)
    }
}

/// Each string borrowed.
fn as_strs(strings: &[String]) -> Vec<&str> {
    strings.iter().map(String::as_str).collect()
}

impl Collect for ArrowRows {
    fn document(
        &mut self,
        position: usize,
        document: &Document<'_>,
        table: SpanTable,
        outline: Option<Outline>,
    ) {
        self.columns
            .push_document(position, document, &table, outline.as_ref());
        document.document_id.clone_into(&mut self.ids[position]);
    }
}

/// One document cut for the store: its text, id, content hash and file state kept with its
/// span table and rows, until they are written.
#[derive(Debug)]
pub struct StoreDocument {
    /// The document's text.
    pub text: String,
    /// Its id (also its source).
    pub document_id: String,
    /// The hash of its bytes.
    pub content_hash: String,
    /// Its file's size, `mtime_ns`, `ctime_ns` and inode, when it came from a file.
    pub file_state: Option<[i64; 4]>,
    /// Its chunks' spans.
    pub table: SpanTable,
    /// Its chunks' ids, parents, children and metadata.
    pub rows: StoreColumns,
}

/// The store's rows of every document cut, in order, each with its content hash and file
/// state (one per document of the batch).
#[derive(Debug)]
pub struct StoreRows<'a> {
    /// The documents cut.
    pub documents: Vec<StoreDocument>,
    content_hashes: &'a [&'a str],
    file_states: &'a [Option<[i64; 4]>],
}

impl<'a> StoreRows<'a> {
    /// Rows for documents whose bytes hash to `content_hashes` and whose files' states are
    /// `file_states` (one of each per document).
    #[must_use]
    pub fn new(content_hashes: &'a [&'a str], file_states: &'a [Option<[i64; 4]>]) -> Self {
        Self {
            documents: Vec::with_capacity(content_hashes.len()),
            content_hashes,
            file_states,
        }
    }
}

impl Collect for StoreRows<'_> {
    fn document(
        &mut self,
        position: usize,
        document: &Document<'_>,
        table: SpanTable,
        outline: Option<Outline>,
    ) {
        let rows = StoreColumns::new(document, &table, outline.as_ref());
        self.documents.push(StoreDocument {
            text: document.text.to_owned(),
            document_id: document.document_id.to_owned(),
            content_hash: self.content_hashes[position].to_owned(),
            file_state: self.file_states[position],
            table,
            rows,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Array, StringArray};

    use super::*;
    use crate::engine::{tree, Splitter, SplitterConfig};
    use crate::job::batch::{run, Chunkers, Documents, Inputs};
    use crate::sizing::Unit;

    const TEXT: &str = "A first sentence here. A second one there.\n\nAnother paragraph.";

    fn levels() -> Vec<Arc<Splitter>> {
        [40, 20]
            .iter()
            .map(|&size| Arc::new(Splitter::new(SplitterConfig::new(size), Unit::Char).unwrap()))
            .collect()
    }

    fn chunkers(documents: usize) -> Chunkers {
        Chunkers::one(levels(), "f".to_owned(), documents)
    }

    /// A batch of three documents whose second is not UTF-8.
    fn datas() -> Vec<&'static [u8]> {
        vec![TEXT.as_bytes(), b"caf\xe9", b"Short text."]
    }

    #[test]
    fn jsonl_records_are_the_writers_own() {
        let datas = datas();
        let mut records = JsonlRecords::new(0);
        run(
            &chunkers(3),
            &Documents::new(Inputs::Bytes(&datas)),
            &mut records,
        );
        let mut expected = Vec::new();
        for text in [TEXT, "Short text."] {
            let levels = levels();
            let borrowed: Vec<&Splitter> = levels.iter().map(AsRef::as_ref).collect();
            let (table, outline) = tree::tree_spans_outlined(&borrowed, text).unwrap();
            let id = crate::ids::text_id(text);
            let document = Document {
                text,
                source: &id,
                document_id: &id,
                fingerprint: "f",
                pages: None,
            };
            jsonl::write_document(&mut expected, &document, &table, outline.as_ref());
        }
        assert_eq!(records.records, expected);
    }

    #[test]
    fn rows_keep_each_documents_id_hash_and_state_past_a_failed_one() {
        let datas = datas();
        let ids = [Some("a"), Some("b"), Some("c")];
        let documents = Documents {
            inputs: Inputs::Bytes(&datas),
            sources: None,
            ids: Some(&ids),
        };
        let hashes = ["ha", "hb", "hc"];
        let states = [Some([1, 2, 3, 4]), None, Some([5, 6, 7, 8])];
        let mut store = StoreRows::new(&hashes, &states);
        let outcome = run(&chunkers(3), &documents, &mut store);
        assert!(outcome.failures[1].is_some());
        let kept: Vec<(&str, &str, Option<[i64; 4]>)> = store
            .documents
            .iter()
            .map(|cut| {
                (
                    cut.document_id.as_str(),
                    cut.content_hash.as_str(),
                    cut.file_state,
                )
            })
            .collect();
        assert_eq!(
            kept,
            [
                ("a", "ha", Some([1, 2, 3, 4])),
                ("c", "hc", Some([5, 6, 7, 8]))
            ]
        );
        assert_eq!(store.documents[1].text, "Short text.");
        // Arrow rows: each row's document id and source are its own document's.
        let mut arrow = ArrowRows::new(3);
        run(&chunkers(3), &documents, &mut arrow);
        let rows = arrow
            .finish(&[Some("sa"), Some("sb"), None], &["{}", "{}", "{}"])
            .unwrap();
        let column = |name: &str| {
            rows.column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .clone()
        };
        let (document_ids, sources) = (column("document_id"), column("source"));
        let last = rows.len() - 1;
        assert_eq!((document_ids.value(0), sources.value(0)), ("a", "sa"));
        assert_eq!(document_ids.value(last), "c");
        assert!(sources.is_null(last));
    }
}
