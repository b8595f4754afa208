//! Binding of the chunk sizes a job measures (`output/sizes.rs`), for its summary.

use pyo3::prelude::*;

use crate::output::sizes::ChunkSizes;

/// The char length of every chunk a job wrote, per level: what its summary reports.
#[pyclass(name = "ChunkSizes", module = "spanchunk._core")]
#[derive(Default)]
pub(crate) struct PyChunkSizes {
    pub(crate) inner: ChunkSizes,
}

impl From<ChunkSizes> for PyChunkSizes {
    fn from(inner: ChunkSizes) -> Self {
        Self { inner }
    }
}

#[pymethods]
impl PyChunkSizes {
    /// Empty, or the sizes of each level from the leaves up (what pickling records).
    #[new]
    #[pyo3(signature = (per_level = None))]
    fn new(per_level: Option<Vec<Vec<i64>>>) -> Self {
        Self {
            inner: ChunkSizes::from_levels(per_level.unwrap_or_default()),
        }
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> (Bound<'py, pyo3::types::PyType>, (Vec<Vec<i64>>,)) {
        (slf.get_type(), (slf.borrow().inner.per_level().to_vec(),))
    }

    /// Adds the sizes `other` holds.
    fn merge(&mut self, other: &Self) {
        self.inner.merge(&other.inner);
    }

    /// One more than the highest level holding a chunk (0: no chunk).
    fn levels(&self) -> usize {
        self.inner.levels()
    }

    /// The number of chunks of `level`.
    fn count(&self, level: usize) -> usize {
        self.inner.count(level)
    }

    /// Nearest-rank percentiles of `level`'s sizes, one per share (0 to 1): the size at rank
    /// `round(last * share)` of the sorted sizes; empty for a level without chunks.
    fn percentiles(&self, level: usize, shares: Vec<f64>) -> Vec<i64> {
        self.inner.percentiles(level, &shares)
    }
}
