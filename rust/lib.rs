//! spanchunk's core: recursive separator splitting with exact byte and char spans, for one
//! level or a whole parent/child tree, in one pass per level and without Python.
//!
//! The folders, each depending only on those listed before it:
//! - `text/`: passes over UTF-8 text that know no settings (char counts, trimming, the
//!   separator search, the line-feed mask, spans);
//! - `sizing/`: the [`Sizer`] trait, the built-in units, the char index and token sizers;
//! - `markdown/`: the one Markdown parse of a document (headings, cut positions), and the
//!   outline type every structure gives;
//! - `code/`: the one tree-sitter parse of a source file (definitions as sections, symbol
//!   paths), as an outline;
//! - `html/`: the one tokenizer pass over an HTML page (its readable text, sections and
//!   cut positions as an outline, and the map back to the page's bytes);
//! - `table/`: the span table the engines write and the bindings read back;
//! - `engine/`: settings, the plan a splitter is built into, the atom and seek engines,
//!   merging, packing and the level cascade;
//! - `output/`: the command line's writers (JSON Lines records, Arrow-ready columns) over a
//!   cut tree;
//! - `store/`: the rows of the `SQLite` store over a cut tree, and a new store filled in bulk;
//! - `job/`: the job over many documents: walking folders, reading files, cutting a batch
//!   and collecting its chunks into any of the outputs above (one loop for all of them);
//! - `py/` (behind the `python` feature): the `PyO3` bindings, the only files that know Python,
//!   so `cargo test` runs with no interpreter.
#![warn(missing_docs, clippy::pedantic)]
// Long argument lists mirror the documented settings one to one.
#![allow(clippy::too_many_arguments)]

pub mod code;
pub mod engine;
pub mod error;
pub mod html;
pub mod ids;
pub mod job;
pub mod markdown;
pub mod output;
pub mod sizing;
pub mod store;
pub mod table;
#[cfg(test)]
mod testing;
pub mod text;

#[cfg(feature = "python")]
mod py;

pub use engine::{tree_spans, KeepSeparator, Splitter, SplitterConfig, Structure};
pub use error::ChunkError;
pub use sizing::{Sizer, Unit};
pub use table::SpanTable;
