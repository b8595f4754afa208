//! The `Chunk` objects: what they are made from (`fields.rs`), the class (`object.rs`) and its
//! Python methods (`methods.rs`), and their bulk construction from span tables (`build.rs`).
//! Building them is most of `chunk()` (the spans are the cheap part), so it happens here, one
//! call per document, with no Python bytecode per chunk.

pub(crate) mod build;
pub(crate) mod fields;
pub(crate) mod methods;
pub(crate) mod object;

pub(crate) use fields::{frozen_metadata, id_string, substring, OwnMetadata, SharedDocument};
pub(crate) use object::PyChunk;
