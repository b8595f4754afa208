//! Passes over UTF-8 text that know nothing of chunking settings: char counts, whitespace and
//! trimming, the separator search, the line-feed mask, and spans in bytes and chars.
//!
//! - `chars.rs`: char counts, whitespace as Python sees it, trimming, absent bytes, prefetch;
//! - `decode.rs`: a file's bytes as text (binary or not, UTF-8, UTF-16 or UTF-32 by its mark);
//! - `search.rs`: one separator level's matches, leftmost-longest;
//! - `sentences.rs`: words, sentences (UAX #29), passages and pages, counted and cut at;
//! - `lines.rs`: the text's line feeds as a bit mask (SIMD), for seeking;
//! - `pages.rs`: the pages of text converted from PDF, from its page markers;
//! - `span.rs`: a chunk's byte and char span, and byte <-> char offset conversion.

pub mod chars;
pub mod decode;
pub mod lines;
pub mod pages;
pub(crate) mod search;
pub mod sentences;
pub mod source_map;
pub mod span;
