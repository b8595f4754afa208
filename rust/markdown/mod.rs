//! Markdown structure for the splitting engine: one `CommonMark` parse (`pulldown-cmark`, with
//! offsets) turns a document into sorted lists of cut positions, which the engine uses as its
//! coarsest separator levels (see `Splitter::split_piece`), and into the list of headings
//! that gives every chunk its heading path.
//!
//! Structure levels, coarsest first:
//! - 0 to 5: the starts of the sections of headings h1 to h6 (ATX or setext, at the top level
//!   of the document; a `#` in a code fence, a block quote or a list is not a section);
//! - 6 (`BLOCK_LEVEL`): the starts of the top-level blocks (paragraphs, code blocks, tables,
//!   block quotes, HTML, thematic breaks, front matter) and of the items of top-level lists;
//! - 7 (`INNER_LEVEL`): the starts of every other block (nested items, paragraphs inside
//!   items and quotes) and of every table row.
//!
//! Every position is moved back to the start of its line, so a cut never separates a list
//! marker or a `>` from its text; a code block or a table row holds no cut position, so it is
//! never cut while it fits.
//!
//! Merging (`engine/sections.rs`, `may_join`): a chunk takes the start of a section (a heading) that is not its own
//! first line only when the chunk began at a heading of the same or a higher level (or at the
//! start of the range being cut), and only with the whole section: small sibling sections
//! merge up to the size, but a chunk never ends inside a section it entered, and never runs
//! from one section into a section of a higher level or of another parent heading.
//!
//! Speed: `benches/NOTES.md`, under `rust/markdown/mod.rs`.

pub mod outline;

pub use outline::{count_header_chars, Heading, Outline, Table};

/// Heading levels, h1 to h6: structure levels 0 to 5.
pub const HEADING_LEVELS: usize = 6;
/// The structure level of top-level blocks.
pub const BLOCK_LEVEL: usize = 6;
/// The structure level of nested blocks and table rows.
pub const INNER_LEVEL: usize = 7;
/// How many structure levels come before the literal separators.
pub const STRUCTURE_LEVELS: usize = 8;
