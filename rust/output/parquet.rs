//! The Parquet output: each batch's [`Columns`] encoded into one row group by the worker
//! that cut it, the row groups appended to the file in input order by the writer.
//!
//! arrow-rs's `parquet` crate, not pyarrow: pyarrow encodes a file's row groups one at a
//! time on one thread (about 65 MB/s of input with snappy on the 2-core benchmark machine,
//! a third of the job's speed with two workers), and it takes no column chunk encoded
//! elsewhere. Here a [`GroupEncoder`] runs in the worker with the cut (GIL released) and
//! [`ParquetFile::append`] only copies the encoded pages to the file.
//!
//! Speed: `benches/NOTES.md`, under `rust/output/parquet.rs`.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter};
use std::path::Path;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BooleanArray, Int32Array, Int64Array, Int8Array, LargeStringArray, ListArray,
    StringArray, StructArray,
};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory, ArrowWriter,
    ArrowWriterOptions,
};
use parquet::basic::{Compression, Encoding};
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;

use super::columns::{self, Columns};

/// Each row's document id and source: offsets and bytes (`columns::repeated_strings`).
pub type Repeated = [(Vec<i64>, Vec<u8>); 2];

/// The columns, in order, as the README documents them (and `spanchunk._schema` gives
/// pyarrow): the file's embedded Arrow schema, so pyarrow reads `text` back as
/// `large_string` and `level` as `int8`.
#[must_use]
pub fn chunk_schema() -> Schema {
    let strings = || DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)));
    Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("document_id", DataType::Utf8, false),
        Field::new("source", DataType::Utf8, true),
        Field::new("level", DataType::Int8, false),
        Field::new("index", DataType::Int32, false),
        Field::new("parent_id", DataType::Utf8, true),
        Field::new("child_ids", strings(), false),
        Field::new("start_char", DataType::Int64, false),
        Field::new("end_char", DataType::Int64, false),
        Field::new("start_byte", DataType::Int64, false),
        Field::new("end_byte", DataType::Int64, false),
        Field::new("text", DataType::LargeUtf8, false),
        Field::new("headings", strings(), true),
        Field::new("symbols", strings(), true),
        Field::new("language", DataType::Utf8, true),
        Field::new("source_start_byte", DataType::Int64, true),
        Field::new("source_end_byte", DataType::Int64, true),
        Field::new(
            "table_header",
            DataType::Struct(table_header_fields()),
            true,
        ),
        Field::new("page_first", DataType::Int64, true),
        Field::new("page_last", DataType::Int64, true),
    ])
}

/// The fields of the `table_header` column: the header row of the table a chunk lies in,
/// its text and its span.
fn table_header_fields() -> Fields {
    Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("start_char", DataType::Int64, true),
        Field::new("end_char", DataType::Int64, true),
        Field::new("start_byte", DataType::Int64, true),
        Field::new("end_byte", DataType::Int64, true),
    ])
}

/// Dictionaries pay off on the columns that repeat a value per document; on chunk texts and
/// ids every value is distinct, and trying a dictionary first was work thrown away.
const DICTIONARY_COLUMNS: [&str; 2] = ["document_id", "source"];
/// Min/max statistics (per column chunk, what readers skip row groups by) on the columns a
/// query filters by; none on texts and ids.
const STATISTICS_COLUMNS: [&str; 8] = [
    "document_id",
    "source",
    "level",
    "index",
    "start_char",
    "end_char",
    "start_byte",
    "end_byte",
];

/// The buffer between the encoded column chunks and the file.
const WRITE_BUFFER: usize = 1 << 20;

/// How the pages are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Snappy: what pyarrow, Spark and `DuckDB` write by default.
    Snappy,
    /// `LZ4_RAW`: faster to write, about as small.
    Lz4,
    /// No compression: the fastest, about twice the size.
    Uncompressed,
}

impl Codec {
    /// The codec of a `--compression` name.
    ///
    /// # Errors
    /// An unknown name, with the names that are known.
    pub fn named(name: &str) -> Result<Self, String> {
        match name {
            "snappy" => Ok(Self::Snappy),
            "lz4" => Ok(Self::Lz4),
            "none" => Ok(Self::Uncompressed),
            other => Err(format!(
                "unknown Parquet compression {other:?}: use snappy, lz4 or none"
            )),
        }
    }

    const fn compression(self) -> Compression {
        match self {
            Self::Snappy => Compression::SNAPPY,
            Self::Lz4 => Compression::LZ4_RAW,
            Self::Uncompressed => Compression::UNCOMPRESSED,
        }
    }
}

/// Everything a worker needs to encode row groups for one file (cheap to clone).
#[derive(Debug, Clone)]
pub struct Encoder {
    schema: SchemaRef,
    factory: Arc<ArrowRowGroupWriterFactory>,
}

/// One batch's rows, encoded: the column chunks of a row group, ready to append.
#[derive(Debug)]
pub struct EncodedGroup {
    chunks: Vec<ArrowColumnChunk>,
    rows: usize,
}

impl EncodedGroup {
    /// How many rows (chunks) the group holds.
    #[must_use]
    pub const fn rows(&self) -> usize {
        self.rows
    }
}

/// A Parquet file being written, one row group per [`append`](Self::append).
pub struct ParquetFile {
    writer: SerializedFileWriter<BufWriter<File>>,
    encoder: Encoder,
}

impl std::fmt::Debug for ParquetFile {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ParquetFile")
            .field("bytes_written", &self.writer.bytes_written())
            .finish_non_exhaustive()
    }
}

impl ParquetFile {
    /// Creates (or truncates) the file at `path` and writes its header.
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn create(path: &Path, codec: Codec) -> Result<Self, ParquetError> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        // Truncated only when there is something to cut: on ext4, a file truncated to
        // nothing and written again is flushed to the disk when it is closed (the
        // `auto_da_alloc` guard for programs that replace a file in place), which took
        // 60-160 ms of each run's end when this opened the job's new, empty temporary
        // file with `File::create`.
        if file.metadata()?.len() > 0 {
            file.set_len(0)?;
        }
        // The column chunks are copied to the file 8 KB at a time (`std::io::copy`
        // in `append_to_row_group`): 11,000 write calls for a 90 MB file, gathered here
        // into 1 MB ones.
        let file = BufWriter::with_capacity(WRITE_BUFFER, file);
        let schema: SchemaRef = Arc::new(chunk_schema());
        let mut properties = WriterProperties::builder()
            .set_compression(codec.compression())
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::None)
            .set_created_by(format!("spanchunk {}", env!("CARGO_PKG_VERSION")));
        for name in DICTIONARY_COLUMNS {
            properties = properties.set_column_dictionary_enabled(ColumnPath::from(name), true);
        }
        for name in STATISTICS_COLUMNS {
            properties = properties
                .set_column_statistics_enabled(ColumnPath::from(name), EnabledStatistics::Chunk);
        }
        // Plain pages for the texts: what a reader decodes fastest (no dictionary to try).
        properties = properties.set_column_encoding(ColumnPath::from("text"), Encoding::PLAIN);
        let options = ArrowWriterOptions::new().with_properties(properties.build());
        let (writer, factory) =
            ArrowWriter::try_new_with_options(file, Arc::clone(&schema), options)?
                .into_serialized_writer()?;
        Ok(Self {
            writer,
            encoder: Encoder {
                schema,
                factory: Arc::new(factory),
            },
        })
    }

    /// What the workers encode this file's row groups with.
    #[must_use]
    pub fn encoder(&self) -> Encoder {
        self.encoder.clone()
    }

    /// Writes `group` as the file's next row group.
    ///
    /// # Errors
    /// The file cannot be written (a full disk: an `io::Error` inside `External`).
    pub fn append(&mut self, group: EncodedGroup) -> Result<(), ParquetError> {
        let mut row_group = self.writer.next_row_group()?;
        for chunk in group.chunks {
            chunk.append_to_row_group(&mut row_group)?;
        }
        row_group.close()?;
        Ok(())
    }

    /// Writes the footer, flushes the file and closes it (a sync is the caller's: by name).
    ///
    /// # Errors
    /// The footer cannot be written.
    pub fn finish(mut self) -> Result<(), ParquetError> {
        self.writer.finish()?;
        Ok(())
    }
}

/// The `io::Error` inside a Parquet error, if it is one.
#[must_use]
pub fn io_error(error: &ParquetError) -> Option<&io::Error> {
    match error {
        ParquetError::External(inner) => inner.downcast_ref::<io::Error>(),
        _ => None,
    }
}

fn i32_offsets(offsets: &[i64]) -> Result<OffsetBuffer<i32>, ParquetError> {
    let narrow = offsets
        .iter()
        .map(|&offset| i32::try_from(offset))
        .collect::<Result<Vec<i32>, _>>()
        .map_err(|_| {
            ParquetError::General(
                "a batch's ids or headings passed 2 GiB: cut fewer files per batch".to_owned(),
            )
        })?;
    Ok(OffsetBuffer::new(ScalarBuffer::from(narrow)))
}

#[allow(clippy::needless_pass_by_value)] // the shape `map_err` takes
fn arrow(error: arrow_schema::ArrowError) -> ParquetError {
    ParquetError::ArrowError(error.to_string())
}

/// Strings of 16 hex digits stored back to back.
fn hex_ids(bytes: Vec<u8>, nulls: Option<NullBuffer>) -> Result<StringArray, ParquetError> {
    let count = bytes.len() / 16;
    let offsets = (0..=count)
        .map(|position| i32::try_from(position * 16))
        .collect::<Result<Vec<i32>, _>>()
        .map_err(|_| ParquetError::General("too many ids in one batch".to_owned()))?;
    StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Buffer::from_vec(bytes),
        nulls,
    )
    .map_err(arrow)
}

fn list_of(
    values: StringArray,
    offsets: &[i64],
    nulls: Option<NullBuffer>,
) -> Result<ListArray, ParquetError> {
    ListArray::try_new(
        Arc::new(Field::new("item", DataType::Utf8, true)),
        i32_offsets(offsets)?,
        Arc::new(values),
        nulls,
    )
    .map_err(arrow)
}

/// The chunks' texts as one array, without the UTF-8 check `try_new` makes: that check was
/// 5% of a run's CPU (perf), over text that is UTF-8 by construction.
fn chunk_texts(offsets: Vec<i64>, text: Vec<u8>) -> Result<LargeStringArray, ParquetError> {
    let ends_fit = offsets.windows(2).all(|pair| pair[0] <= pair[1])
        && offsets.first() == Some(&0)
        && offsets.last().and_then(|&last| usize::try_from(last).ok()) == Some(text.len());
    if !ends_fit {
        return Err(ParquetError::General(
            "chunk text offsets out of order".to_owned(),
        ));
    }
    // SAFETY: `Columns::push_document` appends `document.text[start..end]` for each row, a
    // `&str` sliced at char boundaries (the spans' byte ends are char boundaries, and `get`
    // returns "" otherwise), and records the length after each: every value is valid UTF-8,
    // and the offsets were just checked to be in order, from 0 to the buffer's length.
    Ok(unsafe {
        LargeStringArray::new_unchecked(
            OffsetBuffer::new_unchecked(ScalarBuffer::from(offsets)),
            Buffer::from_vec(text),
            None,
        )
    })
}

fn narrowed<T: TryFrom<i64>>(values: &[i64], name: &str) -> Result<Vec<T>, ParquetError> {
    values
        .iter()
        .map(|&value| T::try_from(value))
        .collect::<Result<Vec<T>, _>>()
        .map_err(|_| ParquetError::General(format!("a chunk's {name} does not fit its column")))
}

/// The batch's columns as Arrow arrays, in [`chunk_schema`]'s order; `repeated` holds the
/// document id and the source of each row (offsets and bytes, see
/// `columns::repeated_strings`).
///
/// # Errors
/// An offset past what the column's type holds.
pub fn arrays(columns: Columns, repeated: Repeated) -> Result<Vec<ArrayRef>, ParquetError> {
    let [(id_offsets, id_bytes), (source_offsets, source_bytes)] = repeated;
    let document_id =
        StringArray::try_new(i32_offsets(&id_offsets)?, Buffer::from_vec(id_bytes), None)
            .map_err(arrow)?;
    let source = StringArray::try_new(
        i32_offsets(&source_offsets)?,
        Buffer::from_vec(source_bytes),
        None,
    )
    .map_err(arrow)?;
    let has_parent = NullBuffer::from(BooleanArray::from(columns.has_parent).values().clone());
    let has_headings = NullBuffer::from(BooleanArray::from(columns.has_headings).values().clone());
    let child_ids = list_of(
        hex_ids(columns.child_ids, None)?,
        &columns.child_offsets,
        None,
    )?;
    let heading_values = StringArray::try_new(
        i32_offsets(&columns.heading_text_offsets)?,
        Buffer::from_vec(columns.heading_text),
        None,
    )
    .map_err(arrow)?;
    let headings = list_of(heading_values, &columns.heading_offsets, Some(has_headings))?;
    let has_symbols = NullBuffer::from(BooleanArray::from(columns.has_symbols).values().clone());
    let symbol_values = StringArray::try_new(
        i32_offsets(&columns.symbol_text_offsets)?,
        Buffer::from_vec(columns.symbol_text),
        None,
    )
    .map_err(arrow)?;
    let symbols = list_of(
        symbol_values,
        &columns.symbol_offsets,
        Some(has_symbols.clone()),
    )?;
    let language = StringArray::try_new(
        i32_offsets(&columns.language_offsets)?,
        Buffer::from_vec(columns.language_text),
        Some(has_symbols),
    )
    .map_err(arrow)?;
    let text = chunk_texts(columns.text_offsets, columns.text)?;
    let [source_start_byte, source_end_byte] = nullable_pair(
        columns.has_source_span,
        columns.source_start_byte,
        columns.source_end_byte,
    )?;
    let [page_first, page_last] =
        nullable_pair(columns.has_pages, columns.page_first, columns.page_last)?;
    let has_table_header = NullBuffer::from(
        BooleanArray::from(columns.has_table_header)
            .values()
            .clone(),
    );
    let [start_char, end_char, start_byte, end_byte] = columns.table_header_spans;
    let table_header = StructArray::try_new(
        table_header_fields(),
        vec![
            Arc::new(
                StringArray::try_new(
                    i32_offsets(&columns.table_header_offsets)?,
                    Buffer::from_vec(columns.table_header_text),
                    None,
                )
                .map_err(arrow)?,
            ),
            Arc::new(Int64Array::from(start_char)),
            Arc::new(Int64Array::from(end_char)),
            Arc::new(Int64Array::from(start_byte)),
            Arc::new(Int64Array::from(end_byte)),
        ],
        Some(has_table_header),
    )
    .map_err(arrow)?;
    Ok(vec![
        Arc::new(hex_ids(columns.id, None)?),
        Arc::new(document_id),
        Arc::new(source),
        Arc::new(Int8Array::from(narrowed::<i8>(&columns.level, "level")?)),
        Arc::new(Int32Array::from(narrowed::<i32>(&columns.index, "index")?)),
        Arc::new(hex_ids(columns.parent_id, Some(has_parent))?),
        Arc::new(child_ids),
        Arc::new(Int64Array::from(columns.start_char)),
        Arc::new(Int64Array::from(columns.end_char)),
        Arc::new(Int64Array::from(columns.start_byte)),
        Arc::new(Int64Array::from(columns.end_byte)),
        Arc::new(text),
        Arc::new(headings),
        Arc::new(symbols),
        Arc::new(language),
        Arc::new(source_start_byte),
        Arc::new(source_end_byte),
        Arc::new(table_header),
        Arc::new(page_first),
        Arc::new(page_last),
    ])
}

/// Two int64 columns null together where `valid` is false (a chunk's source span, its
/// pages).
fn nullable_pair(
    valid: Vec<bool>,
    first: Vec<i64>,
    second: Vec<i64>,
) -> Result<[Int64Array; 2], ParquetError> {
    let valid = NullBuffer::from(BooleanArray::from(valid).values().clone());
    Ok([
        Int64Array::try_new(first.into(), Some(valid.clone())).map_err(arrow)?,
        Int64Array::try_new(second.into(), Some(valid)).map_err(arrow)?,
    ])
}

/// The rows of a batch as one struct array: [`chunk_schema`]'s columns (the same arrays as
/// the command line's row groups, [`arrays`]) and a `metadata` column, each row's document
/// id, source (null where None) and metadata being its document's (`document_ids`,
/// `sources` and `metadata` hold one per document, `columns.document` the document of each
/// row). What Ray's batch function hands to pyarrow, through Arrow's C data interface.
///
/// # Errors
/// An offset past what the column's type holds.
pub fn rows_with_metadata(
    columns: Columns,
    document_ids: &[&str],
    sources: &[Option<&str>],
    metadata: &[&str],
) -> Result<StructArray, ParquetError> {
    let rows = &columns.document;
    let names: Vec<&str> = sources.iter().map(|source| source.unwrap_or("")).collect();
    let repeated = [
        columns::repeated_strings(document_ids, rows),
        columns::repeated_strings(&names, rows),
    ];
    let (metadata_offsets, metadata_bytes) = columns::repeated_strings(metadata, rows);
    let source_nulls = sources.iter().any(Option::is_none).then(|| {
        let valid: Vec<bool> = rows
            .iter()
            .map(|&row| {
                usize::try_from(row)
                    .ok()
                    .and_then(|row| sources.get(row))
                    .is_some_and(Option::is_some)
            })
            .collect();
        NullBuffer::from(valid)
    });
    let mut arrays = arrays(columns, repeated)?;
    let mut fields = chunk_schema().fields().to_vec();
    if let Some(nulls) = source_nulls {
        let (at, _) = chunk_schema().column_with_name("source").ok_or_else(|| {
            ParquetError::General("the chunk schema has no source column".to_owned())
        })?;
        let (offsets, values, _) = arrays[at]
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| ParquetError::General("the source column is not strings".to_owned()))?
            .clone()
            .into_parts();
        arrays[at] = Arc::new(StringArray::try_new(offsets, values, Some(nulls)).map_err(arrow)?);
    }
    fields.push(Arc::new(Field::new("metadata", DataType::Utf8, false)));
    arrays.push(Arc::new(
        StringArray::try_new(
            i32_offsets(&metadata_offsets)?,
            Buffer::from_vec(metadata_bytes),
            None,
        )
        .map_err(arrow)?,
    ));
    StructArray::try_new(fields.into(), arrays, None).map_err(arrow)
}

/// A row group being encoded (on any thread): [`write`](Self::write) the batch's columns a
/// slice at a time, then [`finish`](Self::finish).
///
/// A slice at a time, not the batch at once: the text is copied into the pages and
/// compressed while it is still in the cache (a batch's 20 MB of chunk text were not).
pub struct GroupEncoder {
    schema: SchemaRef,
    writers: Vec<ArrowColumnWriter>,
    rows: usize,
}

impl std::fmt::Debug for GroupEncoder {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("GroupEncoder")
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl GroupEncoder {
    /// A new row group of `encoder`'s file.
    ///
    /// # Errors
    /// The column writers cannot be made.
    pub fn new(encoder: &Encoder) -> Result<Self, ParquetError> {
        Ok(Self {
            schema: Arc::clone(&encoder.schema),
            writers: encoder.factory.create_column_writers(0)?,
            rows: 0,
        })
    }

    /// Appends `columns`' rows to the group.
    ///
    /// # Errors
    /// An offset past its column's type, or the encoder failing.
    pub fn write(&mut self, columns: Columns, repeated: Repeated) -> Result<(), ParquetError> {
        self.rows += columns.rows();
        let arrays = arrays(columns, repeated)?;
        let mut next_writer = self.writers.iter_mut();
        for (field, array) in self.schema.fields().iter().zip(&arrays) {
            for leaf in compute_leaves(field, array)? {
                next_writer
                    .next()
                    .ok_or_else(|| ParquetError::General("more leaves than columns".to_owned()))?
                    .write(&leaf)?;
            }
        }
        Ok(())
    }

    /// The encoded row group.
    ///
    /// # Errors
    /// The encoder failing on the last pages.
    pub fn finish(self) -> Result<EncodedGroup, ParquetError> {
        let chunks = self
            .writers
            .into_iter()
            .map(ArrowColumnWriter::close)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(EncodedGroup {
            chunks,
            rows: self.rows,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markdown::Outline;
    use crate::output::{columns, Document};
    use arrow_array::{Array, RecordBatch};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

    #[test]
    fn rows_with_metadata_repeat_each_documents_values() {
        // Two documents of three rows each; the second has no source.
        let text = "0123456";
        let document = Document {
            text,
            source: "",
            document_id: "d2",
            fingerprint: "f",
            pages: None,
        };
        let mut columns = Columns::default();
        let table = columns::tests::parent_and_two_children();
        columns.push_document(0, &document, &table, None);
        columns.push_document(1, &document, &table, None);
        let rows = rows_with_metadata(
            columns,
            &["d1", "d2"],
            &[Some("a.txt"), None],
            &["{}", r#"{"k":1}"#],
        )
        .unwrap();
        assert_eq!(rows.len(), 6);
        let fields: Vec<&str> = rows.fields().iter().map(|f| f.name().as_str()).collect();
        assert_eq!(fields.last(), Some(&"metadata"));
        assert_eq!(fields.len(), chunk_schema().fields().len() + 1);
        let strings = |name: &str| {
            rows.column_by_name(name)
                .unwrap()
                .as_any()
                .downcast_ref::<StringArray>()
                .unwrap()
                .clone()
        };
        let source = strings("source");
        assert_eq!(source.null_count(), 3);
        assert_eq!(source.value(0), "a.txt");
        assert!(source.is_null(3));
        assert_eq!(strings("document_id").value(5), "d2");
        assert_eq!(strings("metadata").value(2), "{}");
        assert_eq!(strings("metadata").value(4), r#"{"k":1}"#);
    }

    fn batch_of(text: &'static str, source: &'static str) -> (Columns, Repeated) {
        let table = columns::tests::parent_and_two_children();
        let document = Document {
            text,
            source,
            document_id: "0123456789abcdef",
            fingerprint: "f",
            pages: None,
        };
        let mut columns = Columns::default();
        let outline = (source == "a.md").then(|| Outline::parse(text));
        columns.push_document(0, &document, &table, outline.as_ref());
        let repeated = [
            columns::repeated_strings(&["0123456789abcdef"], &columns.document),
            columns::repeated_strings(&[source], &columns.document),
        ];
        (columns, repeated)
    }

    fn read(path: &Path) -> Vec<RecordBatch> {
        let file = File::open(path).unwrap();
        ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
            .map(Result::unwrap)
            .collect()
    }

    #[test]
    fn row_groups_encoded_anywhere_read_back_in_order() {
        let folder = std::env::temp_dir().join(format!("spanchunk-parquet-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        for codec in [Codec::Snappy, Codec::Lz4, Codec::Uncompressed] {
            let path = folder.join("out.parquet");
            let mut file = ParquetFile::create(&path, codec).unwrap();
            let encoder = file.encoder();
            // Encoded on other threads, appended here in order.
            let groups: Vec<EncodedGroup> = std::thread::scope(|scope| {
                let handles: Vec<_> = [("# A\n\nxy", "a.md"), ("ab c\nxy", "b.txt")]
                    .into_iter()
                    .map(|(text, source)| {
                        let encoder = encoder.clone();
                        scope.spawn(move || {
                            let (columns, repeated) = batch_of(text, source);
                            let mut group = GroupEncoder::new(&encoder).unwrap();
                            group.write(columns, repeated).unwrap();
                            group.finish().unwrap()
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|handle| handle.join().unwrap())
                    .collect()
            });
            assert_eq!(
                groups.iter().map(EncodedGroup::rows).collect::<Vec<_>>(),
                [3, 3]
            );
            for group in groups {
                file.append(group).unwrap();
            }
            file.finish().unwrap();
            let batches = read(&path);
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            assert_eq!(rows, 6);
            let first = &batches[0];
            assert_eq!(first.schema().fields(), chunk_schema().fields());
            let text = first
                .column(11)
                .as_any()
                .downcast_ref::<LargeStringArray>()
                .unwrap();
            let all: Vec<&str> = batches
                .iter()
                .flat_map(|batch| {
                    let column = batch.column(11).as_any().downcast_ref::<LargeStringArray>();
                    column
                        .unwrap()
                        .iter()
                        .map(Option::unwrap)
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(text.value(0), "# A\n\nxy");
            assert_eq!(all, ["# A\n\nxy", "# A", "xy", "ab c\nxy", "ab ", "xy"]);
            let parent = batches[0].column(5);
            assert!(parent.is_null(0) && !parent.is_null(1));
            let headings = batches.iter().flat_map(|batch| {
                let column = batch.column(12);
                (0..column.len())
                    .map(|row| column.is_null(row))
                    .collect::<Vec<_>>()
            });
            assert_eq!(
                headings.collect::<Vec<_>>(),
                [false, false, false, true, true, true]
            );
            std::fs::remove_file(&path).unwrap();
        }
        std::fs::remove_dir(&folder).unwrap();
    }

    #[test]
    fn a_group_written_in_slices_holds_every_row_once() {
        let folder = std::env::temp_dir().join(format!("spanchunk-slices-{}", std::process::id()));
        std::fs::create_dir_all(&folder).unwrap();
        let path = folder.join("out.parquet");
        let mut file = ParquetFile::create(&path, Codec::Snappy).unwrap();
        let mut group = GroupEncoder::new(&file.encoder()).unwrap();
        for (text, source) in [("# A\n\nxy", "a.md"), ("ab c\nxy", "b.txt")] {
            let (columns, repeated) = batch_of(text, source);
            group.write(columns, repeated).unwrap();
        }
        let group = group.finish().unwrap();
        assert_eq!(group.rows(), 6);
        file.append(group).unwrap();
        file.finish().unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().num_row_groups(), 1);
        let rows: usize = reader
            .build()
            .unwrap()
            .map(|batch| batch.unwrap().num_rows())
            .sum();
        assert_eq!(rows, 6);
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_dir(&folder).unwrap();
    }

    #[test]
    fn codec_names() {
        assert_eq!(Codec::named("lz4"), Ok(Codec::Lz4));
        assert!(Codec::named("zstd")
            .unwrap_err()
            .contains("snappy, lz4 or none"));
    }

    #[test]
    fn offsets_out_of_order_are_refused() {
        assert!(chunk_texts(vec![0, 3, 2], b"abc".to_vec()).is_err());
        assert!(chunk_texts(vec![0, 2], b"abc".to_vec()).is_err());
        assert_eq!(
            chunk_texts(vec![0, 1, 3], b"abc".to_vec())
                .unwrap()
                .value(1),
            "bc"
        );
    }
}
