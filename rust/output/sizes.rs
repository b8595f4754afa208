//! The sizes of the chunks a job wrote, by level, in each level's unit, for its summary
//! (count and percentiles): kept as plain lists and ordered once at the end, so the summary needs no Python list of
//! every chunk's size (sorting 350,000 Python ints was a tenth of a second of a 100 MB run).

use crate::engine::Splitter;
use crate::table::SpanTable;

/// The size of every chunk written, per level (0: the leaves), in the level's unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChunkSizes {
    per_level: Vec<Vec<i64>>,
}

impl ChunkSizes {
    /// The sizes of each level, from the leaves up (what [`ChunkSizes::per_level`] gives).
    #[must_use]
    pub fn from_levels(per_level: Vec<Vec<i64>>) -> Self {
        Self { per_level }
    }

    /// The sizes recorded for each level, from the leaves up, in the order they came.
    #[must_use]
    pub fn per_level(&self) -> &[Vec<i64>] {
        &self.per_level
    }

    /// Records every chunk of a document's span table (`text`'s, cut by `levels`, parents
    /// first) in its level's unit: chars and bytes from the spans, any other unit measured
    /// by the level's sizer (which a chunk's text fitted when it was cut, so it cannot fail;
    /// a failure records the char length).
    pub fn push_table(&mut self, levels: &[&Splitter], text: &str, table: &SpanTable) {
        for record in &table.records {
            let [level, _, _, start_byte, end_byte, start_char, end_char] = record.0;
            let level = usize::try_from(level).unwrap_or(0);
            let sizer = levels
                .len()
                .checked_sub(level + 1)
                .and_then(|at| levels.get(at))
                .map(|splitter| splitter.sizer());
            let size = match sizer.map(crate::Sizer::name) {
                None | Some("char") => end_char - start_char,
                Some("byte") => end_byte - start_byte,
                Some(_) => {
                    let (from, to) = (
                        usize::try_from(start_byte).unwrap_or(0),
                        usize::try_from(end_byte).unwrap_or(0),
                    );
                    sizer
                        .and_then(|sizer| {
                            text.get(from..to).and_then(|chunk| sizer.size(chunk).ok())
                        })
                        .map_or(end_char - start_char, |size| {
                            i64::try_from(size).unwrap_or(i64::MAX)
                        })
                }
            };
            self.push(level, size);
        }
    }

    /// Records a chunk of `level` that is `size` units long.
    pub fn push(&mut self, level: usize, size: i64) {
        if self.per_level.len() <= level {
            self.per_level.resize_with(level + 1, Vec::new);
        }
        self.per_level[level].push(size);
    }

    /// Adds every size `other` holds.
    pub fn merge(&mut self, other: &Self) {
        if self.per_level.len() < other.per_level.len() {
            self.per_level.resize_with(other.per_level.len(), Vec::new);
        }
        for (mine, theirs) in self.per_level.iter_mut().zip(&other.per_level) {
            mine.extend_from_slice(theirs);
        }
    }

    /// One more than the highest level that holds a chunk (0 when there is none).
    #[must_use]
    pub fn levels(&self) -> usize {
        self.per_level
            .iter()
            .rposition(|sizes| !sizes.is_empty())
            .map_or(0, |top| top + 1)
    }

    /// The number of chunks of `level`.
    #[must_use]
    pub fn count(&self, level: usize) -> usize {
        self.per_level.get(level).map_or(0, Vec::len)
    }

    /// Nearest-rank percentiles of `level`'s sizes: for each share in 0..=1, the size at
    /// rank `round(last * share)` of the sorted sizes (ties to even, as Python's `round`).
    /// Empty when the level holds no chunk.
    #[must_use]
    pub fn percentiles(&self, level: usize, shares: &[f64]) -> Vec<i64> {
        let Some(sizes) = self.per_level.get(level).filter(|sizes| !sizes.is_empty()) else {
            return Vec::new();
        };
        let mut ordered = sizes.clone();
        ordered.sort_unstable();
        let last = ordered.len() - 1;
        shares
            .iter()
            .map(|share| {
                // A rank inside 0..=last: the share is clamped first, so the cast keeps it.
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss
                )]
                let rank = (last as f64 * share.clamp(0.0, 1.0)).round_ties_even() as usize;
                ordered[rank.min(last)]
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_ranks_rounded_as_python_rounds() {
        let mut sizes = ChunkSizes::default();
        for size in [5, 1, 4, 2, 3, 6] {
            sizes.push(0, size);
        }
        sizes.push(2, 10);
        // last = 5: 2.5 rounds to 2 (ties to even), 4.5 to 4, 4.95 to 5.
        assert_eq!(
            sizes.percentiles(0, &[0.5, 0.9, 0.99, 1.0]),
            vec![3, 5, 6, 6]
        );
        assert_eq!(sizes.levels(), 3);
        assert_eq!(sizes.count(1), 0);
        assert!(sizes.percentiles(1, &[0.5]).is_empty());
        let mut more = ChunkSizes::default();
        more.push(0, 100);
        more.merge(&sizes);
        assert_eq!(more.count(0), 7);
        assert_eq!(more.percentiles(2, &[1.0]), vec![10]);
    }
}
