//! What a chunk carries into a framework's metadata beyond its offsets and ids: its paths
//! (Markdown's headings, source code's symbols and language) and its own fields (an HTML
//! page's source span, the header row of the table it is in, the pages it spans), read from
//! its metadata once per mapping (the chunks of one path share theirs) and written under the
//! framework's keys.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PyString};
use pyo3::{ffi, intern};

use super::shape::update;

// The positions of what a chunk carries, in the keys and in what is found.
const HEADINGS: usize = 0;
const SYMBOLS: usize = 1;
const LANGUAGE: usize = 2;
const TABLE_HEADER: usize = 5;
const PAGE_FIRST: usize = 6;
const PAGE_LAST: usize = 7;

/// How one document's chunks write what they carry (`FieldWriter::write`): the framework's
/// keys, in the order they are written (headings, symbols, language, source start and end
/// byte, table header, first and last page), the offsets of the document's text in its
/// source (a table header's span moves by them), and the page its text starts on when its
/// metadata says so (a piece of a larger document): the chunks' pages then count from it.
pub(crate) struct FieldWriter<'py> {
    keys: [Bound<'py, PyString>; 8],
    char_offset: usize,
    byte_offset: usize,
    start_page: Option<i64>,
    /// What the pages move by: decided at the first chunk with pages.
    page_shift: Option<i64>,
    /// The mapping last read, and its values under the keys' positions.
    seen: Option<Bound<'py, PyAny>>,
    found: [Option<Bound<'py, PyAny>>; 8],
}

impl<'py> FieldWriter<'py> {
    /// The writer of one document's chunks, whose framework metadata starts from `base`.
    pub(crate) fn new(
        keys: &[Bound<'py, PyString>; 8],
        base: &Bound<'py, PyAny>,
        char_offset: usize,
        byte_offset: usize,
    ) -> PyResult<Self> {
        let py = base.py();
        let start = base.call_method1(intern!(py, "get"), (&keys[PAGE_FIRST],))?;
        let start_page = if start.is_instance_of::<PyInt>() && !start.is_instance_of::<PyBool>() {
            Some(start.extract::<i64>()?)
        } else {
            None
        };
        Ok(Self {
            keys: keys.clone(),
            char_offset,
            byte_offset,
            start_page,
            page_shift: None,
            seen: None,
            found: Default::default(),
        })
    }

    /// Writes into `metadata` what the chunk whose metadata is `mapping` carries: each key
    /// only where the chunk has its value; a path as a new list, a table header as a new
    /// plain dict.
    pub(crate) fn write(
        &mut self,
        metadata: &Bound<'py, PyDict>,
        mapping: &Bound<'py, PyAny>,
    ) -> PyResult<()> {
        if !self.seen.as_ref().is_some_and(|seen| seen.is(mapping)) {
            self.read(mapping)?;
        }
        for position in 0..8 {
            let Some(value) = &self.found[position] else {
                continue;
            };
            let key = &self.keys[position];
            match position {
                HEADINGS | SYMBOLS => metadata.set_item(key, as_list(value)?)?,
                TABLE_HEADER => metadata.set_item(key, self.header(value)?)?,
                PAGE_FIRST | PAGE_LAST => {
                    let shift = match (self.page_shift, self.start_page) {
                        (Some(shift), _) => shift,
                        (None, Some(start)) if position == PAGE_FIRST => {
                            let shift = start - value.extract::<i64>()?;
                            self.page_shift = Some(shift);
                            shift
                        }
                        _ => 0,
                    };
                    if shift == 0 {
                        metadata.set_item(key, value)?;
                    } else {
                        metadata.set_item(key, value.extract::<i64>()? + shift)?;
                    }
                }
                _ => metadata.set_item(key, value)?,
            }
        }
        Ok(())
    }

    /// Looks up what `mapping` holds (a language only with a symbol path).
    fn read(&mut self, mapping: &Bound<'py, PyAny>) -> PyResult<()> {
        let py = mapping.py();
        let names = [
            intern!(py, "headings"),
            intern!(py, "symbols"),
            intern!(py, "language"),
            intern!(py, "source_start_byte"),
            intern!(py, "source_end_byte"),
            intern!(py, "table_header"),
            intern!(py, "page_first"),
            intern!(py, "page_last"),
        ];
        for (position, name) in names.into_iter().enumerate() {
            self.found[position] = if position == LANGUAGE && self.found[SYMBOLS].is_none() {
                None
            } else if mapping.contains(name)? {
                // `in`, then `[]`: no bound method is made (`get` on a mapping proxy makes
                // one per call, and the garbage collector's passes follow the allocations).
                let found = mapping.get_item(name)?;
                (!found.is_none()).then_some(found)
            } else {
                None
            };
        }
        self.seen = Some(mapping.clone());
        Ok(())
    }

    /// A table header as a plain dict of its own, its span moved by the text's offsets.
    fn header(&self, header: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
        let py = header.py();
        let dict = PyDict::new(py);
        update(&dict, header)?;
        let moves = [
            (intern!(py, "start_char"), self.char_offset),
            (intern!(py, "end_char"), self.char_offset),
            (intern!(py, "start_byte"), self.byte_offset),
            (intern!(py, "end_byte"), self.byte_offset),
        ];
        for (key, offset) in moves {
            if offset > 0 {
                if let Some(value) = dict.get_item(key)? {
                    dict.set_item(key, value.extract::<usize>()? + offset)?;
                }
            }
        }
        Ok(dict)
    }
}

/// `list(sequence)`: a new list.
fn as_list<'py>(sequence: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    // SAFETY: `sequence` is a live object; PySequence_List returns a new list (a new
    // reference) or NULL with an exception set.
    unsafe {
        Bound::from_owned_ptr_or_err(sequence.py(), ffi::PySequence_List(sequence.as_ptr()))
            .map(|list| list.cast_into_unchecked())
    }
}
