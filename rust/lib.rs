//! spanchunk's core: recursive separator splitting with exact byte and char spans, for one
//! level or a whole parent/child tree, in one pass per level and without Python.
//!
//! The modules never touch Python; `py.rs` (behind the `python` feature) is the only binding
//! file, so `cargo test` runs with no interpreter.
#![warn(missing_docs, clippy::pedantic)]
// Long argument lists mirror the documented settings one to one.
#![allow(clippy::too_many_arguments)]

pub mod error;
pub mod ids;
pub mod markdown;
pub mod merge;
pub mod output;
mod pack;
mod pretoken;
mod search;
mod seek;
pub mod size;
pub mod span;
pub mod split;
#[cfg(test)]
mod testing;
pub mod token;
pub mod tree;

#[cfg(feature = "python")]
mod py;
#[cfg(feature = "python")]
mod py_output;

pub use error::ChunkError;
pub use size::{Sizer, Unit};
pub use split::{KeepSeparator, Splitter, SplitterConfig, Structure};
pub use tree::{tree_spans, LevelSpans, SpanTable};
