//! Bindings of the engine (`engine/`): a level's `Splitter` and a whole tree's.

pub(crate) mod splitter;
pub(crate) mod tree;
