//! Bindings of the command line job's writers (`output/`): a batch of files' bytes in, the
//! bytes of its JSON Lines records (or its Parquet columns) out, every pass over the text
//! (UTF-8 check, cutting, ids, escaping) done with the GIL released.

// PyO3 hands extracted arguments over by value.
#![allow(clippy::needless_pass_by_value)]

use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyDict};

use super::splitter::{splitters, PySplitter};
use crate::engine::{tree, Splitter};
use crate::ids;
use crate::output::columns::Columns;
use crate::output::{jsonl, Document};

/// Registers the functions of this file in the `_core` module.
pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(write_documents, module)?)
}

/// What a batch turns into, before it is handed to Python.
enum Written {
    Jsonl(Vec<u8>),
    Columns(Box<Columns>, Vec<String>),
}

/// What `write_documents` returns: the written batch, each document's error, and the level
/// and char length of every chunk written.
type Batch<'py> = (
    Bound<'py, PyAny>,
    Vec<Option<String>>,
    Bound<'py, PyArray1<i64>>,
    Bound<'py, PyArray1<i64>>,
);

/// The reason a file's bytes are not UTF-8, worded as the CLI reports it.
fn not_utf8(data: &[u8], error: &std::str::Utf8Error) -> String {
    let at = error.valid_up_to();
    format!("not UTF-8 (byte 0x{:02x} at offset {at})", data[at])
}

/// Cuts every document of a batch with `levels` and writes its chunks as `format`
/// ("jsonl": one bytes object, the records of every document in order; "columns": a dict of
/// numpy arrays and bytes, see `output::columns::Columns`, and `document_ids`, the id of each
/// document). Returns that, the error of each
/// document (None: written), and the level and char length of every chunk written.
#[pyfunction]
#[pyo3(signature = (levels, datas, sources, fingerprint, format = "jsonl"))]
fn write_documents<'py>(
    py: Python<'py>,
    levels: Vec<Bound<'py, PySplitter>>,
    datas: Vec<PyBackedBytes>,
    sources: Vec<PyBackedStr>,
    fingerprint: &str,
    format: &str,
) -> PyResult<Batch<'py>> {
    if datas.len() != sources.len() {
        return Err(PyValueError::new_err(format!(
            "{} documents and {} sources: pass one source per document",
            datas.len(),
            sources.len()
        )));
    }
    let as_columns = match format {
        "jsonl" => false,
        "columns" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "format must be \"jsonl\" or \"columns\", not {other:?}"
            )))
        }
    };
    let owned = splitters(&levels);
    let (written, errors, chunk_levels, sizes) = super::detach(py, || {
        let borrowed: Vec<&Splitter> = owned.iter().map(AsRef::as_ref).collect();
        // JSON Lines run at about 3.2x the text (parents and children repeat it, plus keys):
        // reserved once (pages not written are never touched), not grown record by record.
        let text_bytes: usize = datas.iter().map(|data| data.len()).sum();
        let mut jsonl_out = Vec::with_capacity(if as_columns { 0 } else { text_bytes * 7 / 2 });
        let mut columns = Columns::default();
        let mut errors = Vec::with_capacity(datas.len());
        let (mut chunk_levels, mut sizes) = (Vec::new(), Vec::new());
        // The document id of each position (empty where the document failed).
        let mut document_ids = vec![String::new(); datas.len()];
        for (position, (data, source)) in datas.iter().zip(&sources).enumerate() {
            let text = match std::str::from_utf8(data) {
                Ok(text) => text,
                Err(error) => {
                    errors.push(Some(not_utf8(data, &error)));
                    continue;
                }
            };
            let (table, outline) = match tree::tree_spans_outlined(&borrowed, text) {
                Ok(cut) => cut,
                Err(error) => {
                    errors.push(Some(error.to_string()));
                    continue;
                }
            };
            let document_id = ids::text_id(text);
            let document = Document {
                text,
                source,
                document_id: &document_id,
                fingerprint,
            };
            if as_columns {
                columns.push_document(position, &document, &table, outline.as_ref());
            } else {
                jsonl::write_document(&mut jsonl_out, &document, &table, outline.as_ref());
            }
            document_ids[position] = document_id;
            for record in &table.records {
                chunk_levels.push(record.0[0]);
                sizes.push(record.0[6] - record.0[5]);
            }
            errors.push(None);
        }
        let written = if as_columns {
            Written::Columns(Box::new(columns), document_ids)
        } else {
            Written::Jsonl(jsonl_out)
        };
        (written, errors, chunk_levels, sizes)
    })?;
    let written = match written {
        Written::Jsonl(bytes) => PyBytes::new(py, &bytes).into_any(),
        Written::Columns(columns, document_ids) => {
            let dict = columns_dict(py, *columns)?;
            dict.set_item("document_ids", document_ids)?;
            dict.into_any()
        }
    };
    Ok((
        written,
        errors,
        chunk_levels.into_pyarray(py),
        sizes.into_pyarray(py),
    ))
}

/// The columns as a dict: numpy arrays for numbers and flags, bytes for text buffers.
fn columns_dict(py: Python<'_>, columns: Columns) -> PyResult<Bound<'_, PyDict>> {
    let dict = PyDict::new(py);
    let rows = columns.rows();
    dict.set_item("rows", rows)?;
    for (name, values) in [
        ("document", columns.document),
        ("level", columns.level),
        ("index", columns.index),
        ("start_char", columns.start_char),
        ("end_char", columns.end_char),
        ("start_byte", columns.start_byte),
        ("end_byte", columns.end_byte),
        ("child_offsets", columns.child_offsets),
        ("text_offsets", columns.text_offsets),
        ("heading_offsets", columns.heading_offsets),
        ("heading_text_offsets", columns.heading_text_offsets),
    ] {
        dict.set_item(name, values.into_pyarray(py))?;
    }
    for (name, values) in [
        ("has_parent", columns.has_parent),
        ("has_headings", columns.has_headings),
    ] {
        dict.set_item(name, values.into_pyarray(py))?;
    }
    for (name, values) in [
        ("id", columns.id),
        ("parent_id", columns.parent_id),
        ("child_ids", columns.child_ids),
        ("text", columns.text),
        ("heading_text", columns.heading_text),
    ] {
        dict.set_item(name, PyBytes::new(py, &values))?;
    }
    Ok(dict)
}
