//! Source code structure for the splitting engine: one tree-sitter parse of a file (its
//! language's published grammar) turns it into the same [`Outline`](crate::markdown::Outline) a Markdown parse gives,
//! so code is cut by the one engine, as Markdown is.
//!
//! Structure levels, coarsest first (see `markdown/` for their numbers):
//! - 0 to 5: the starts of the sections at nesting depths 1 to 6. A section is a definition
//!   (a class, a function or method, an impl, trait or interface block, a type; the kinds
//!   each language counts are in [`LANGUAGES`]), from the comments and attributes right
//!   above it (decorators are part of the definition's node), or a group of statements
//!   between definitions at the same depth (a section without a name);
//! - 6 (`BLOCK_LEVEL`): the starts of statements (the children of the document, of a
//!   definition and of its body) that begin their line;
//! - 7 (`INNER_LEVEL`): the start of every other syntax node that begins its line.
//!
//! A definition that fits is never cut; one that does not is cut at its inner definitions,
//! then between its statements, then between nested nodes, then by the separators. Merging
//! follows the Markdown rules (`engine/sections.rs`): small sibling definitions merge up to
//! the size, and a chunk takes a definition only whole. Every position is the start of its
//! line (only whitespace before it there), or the node's own start when code precedes it
//! on its line.
//!
//! The symbol path of a position is the names of the definitions that enclose it, outermost
//! first (`Outline::path`). Text that does not parse is still cut: tree-sitter's error
//! recovery gives a tree where it can; where more than half of a file is in errors, the
//! outline is empty and the file is cut by the separators alone.

pub mod languages;
pub mod outline;

pub use languages::{Language, LanguageSpec, LANGUAGES};
pub use outline::outline;
