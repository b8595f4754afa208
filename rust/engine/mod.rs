//! The splitting engine: settings become a plan (`Splitter`), a text is cut into chunks by
//! one of two engines that give the same chunks, and every level of a tree is cut in one walk.
//!
//! How the modules depend on each other (each only on those listed before it):
//! - `config.rs`: the settings of one level, as the Python API spells them;
//! - `plan.rs`: a [`Splitter`], the plan the settings are built into (searchers, masks,
//!   seekability and the separators as seeking searches for them);
//! - `atom.rs`: the [`atom::Atom`], a piece that fits the chunk size;
//! - `pack.rs`: packing for sizers whose counts do not add up (tokens, a Python callable);
//! - `sections.rs`: the rules of merging sections, Markdown's and code's (a heading or a
//!   definition comes with its whole section; a heading or a signature starts the chunk of
//!   what follows it; a lone closing delimiter joins the code before it);
//! - `merge.rs`: packing atoms into chunks that end at the coarsest boundary, with overlap;
//! - `split.rs`: the atom engine, recursive separator splitting into atoms;
//! - `seek.rs`: the seek engine, chunk ends found without an atom per piece;
//! - `cascade.rs`: both engines cutting every level of a tree in one walk;
//! - `tree.rs`: the entry points, and `cut_levels`, the one choice between the engines.

pub mod atom;
mod cascade;
pub mod config;
mod merge;
mod pack;
pub mod plan;
mod sections;
mod seek;
pub mod split;
pub mod tree;

pub use config::{
    default_separators, default_separators_for, KeepSeparator, Merge, SplitterConfig, Structure,
};
pub use plan::Splitter;
pub use split::Prepared;
pub use tree::{
    check_levels, chunked_documents, cut_document, document_pages, level_spans, page_content,
    panic_for_tests, tree_spans, tree_spans_by_atoms, tree_spans_many, tree_spans_outlined,
    tree_spans_outlined_many, tree_spans_sourced, ChunkedDocument, DocumentInput,
};

#[cfg(test)]
mod adversarial_tests;
