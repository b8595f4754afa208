//! The job over many documents, as the command line, Ray's batch function and the store's
//! bulk load run it: finding files (`walk`, with folders listed ahead on helper threads,
//! `prefetch`, both taking a folder's sorted entries from `listing`, and a store re-run's
//! files settled by their recorded state, `settle`), reading them (`read`), and cutting a
//! batch of documents and collecting their chunks (`batch`, into the collectors of
//! `collect`), on whichever thread calls it: the callers' worker threads, the GIL released.
//!
//! Speed: the measurements behind these files are in `benches/NOTES.md`.

pub mod batch;
pub mod collect;
pub mod listing;
pub mod prefetch;
pub mod read;
pub mod settle;
pub mod walk;
