//! Framework objects built in one call per batch: LangChain `Document`s and Haystack
//! `Document`s, from `Chunk`s (`langchain_documents`, `haystack_documents`) or straight from
//! texts cut here (`langchain_cut`, `haystack_cut`), each instance made the way the
//! framework's own shortcut makes it (`object.__new__(cls)`, then `__dict__` and, for a
//! pydantic model, its bookkeeping slots), with the metadata dict of every chunk filled here.
//!
//! Speed: what was measured is in `benches/NOTES.md`.
//!
//! Whether these objects are the ones the constructors build is checked once at import by
//! the integration modules, which use the constructors whenever the check fails.

pub(crate) mod carried;
pub(crate) mod haystack;
pub(crate) mod langchain;
pub(crate) mod rows;
pub(crate) mod shape;
