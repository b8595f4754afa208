//! Where each piece of a page's readable text came from in the page's source.

/// A stretch of the readable text and the source bytes it was made from. In a `verbatim`
/// stretch the two are the same bytes, so every offset inside it maps exactly; any other
/// stretch (a decoded character reference, collapsed white space, a line break a block
/// element made) maps as a whole to its source range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Byte offsets of the stretch in the readable text.
    pub text: usize,
    /// End of the stretch in the readable text.
    pub text_end: usize,
    /// Byte offsets of its source in the page.
    pub source: usize,
    /// End of its source in the page.
    pub source_end: usize,
    /// Whether the text is the source's bytes unchanged.
    pub verbatim: bool,
}

/// The map from a page's readable text back to its source: sorted, non-overlapping
/// [`Segment`]s covering every byte of the text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    segments: Vec<Segment>,
}

impl SourceMap {
    /// Appends a stretch of `length` text bytes at `text` made from `source`; a verbatim
    /// stretch that continues the last one in both texts joins it.
    pub(crate) fn push(
        &mut self,
        text: usize,
        length: usize,
        source: (usize, usize),
        verbatim: bool,
    ) {
        if length == 0 {
            return;
        }
        if let Some(last) = self.segments.last_mut() {
            if verbatim && last.verbatim && last.text_end == text && last.source_end == source.0 {
                last.text_end += length;
                last.source_end = source.1;
                return;
            }
        }
        self.segments.push(Segment {
            text,
            text_end: text + length,
            source: source.0,
            source_end: source.1,
            verbatim,
        });
    }

    /// The stretches, in text order.
    #[must_use]
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The source byte range of the text bytes `start..end`: from where the first of them
    /// came from to where the last of them ends (`(0, 0)` for an empty map).
    #[must_use]
    pub fn source_span(&self, start: usize, end: usize) -> (usize, usize) {
        if self.segments.is_empty() {
            return (0, 0);
        }
        let source_start = self.source_at(start, |segment| segment.text <= start, false);
        let source_end = self.source_at(end, |segment| segment.text < end, true);
        (source_start, source_end.max(source_start))
    }

    /// Where text offset `offset` falls in the source, in the last segment that `before`
    /// holds for: inside a verbatim one exactly, else at its start (or its end, for the end
    /// of a range).
    fn source_at(&self, offset: usize, before: impl Fn(&Segment) -> bool, end: bool) -> usize {
        let row = self.segments.partition_point(before).saturating_sub(1);
        let segment = &self.segments[row];
        if segment.verbatim {
            segment.source + offset.clamp(segment.text, segment.text_end) - segment.text
        } else if end {
            segment.source_end
        } else {
            segment.source
        }
    }

    /// Where source byte `source` falls in the text: exactly inside a verbatim stretch, else
    /// at the start of the first stretch made from bytes at or after it (the text's end when
    /// none is). Stretches follow the source in order, as a page is read.
    #[must_use]
    pub fn text_at(&self, source: usize) -> usize {
        let row = self
            .segments
            .partition_point(|segment| segment.source_end <= source);
        match self.segments.get(row) {
            None => self.segments.last().map_or(0, |last| last.text_end),
            Some(segment) if segment.verbatim && source > segment.source => {
                (segment.text + source - segment.source).min(segment.text_end)
            }
            Some(segment) if source > segment.source => segment.text_end,
            Some(segment) => segment.text,
        }
    }

    /// The map of the text bytes `start..end` alone, their offsets counted from `start`.
    #[must_use]
    pub(crate) fn slice(&self, start: usize, end: usize) -> Self {
        let from = self
            .segments
            .partition_point(|segment| segment.text_end <= start);
        let mut segments = Vec::new();
        for segment in &self.segments[from..] {
            if segment.text >= end {
                break;
            }
            let mut kept = *segment;
            if kept.verbatim {
                let cut_front = start.saturating_sub(kept.text);
                let cut_back = kept.text_end.saturating_sub(end);
                kept.source += cut_front;
                kept.source_end -= cut_back;
            }
            kept.text = kept.text.max(start) - start;
            kept.text_end = kept.text_end.min(end) - start;
            segments.push(kept);
        }
        Self { segments }
    }
}

#[cfg(test)]
mod tests {
    use super::SourceMap;

    #[test]
    fn spans_inside_and_across_stretches() {
        // "ab c" from "ab\n  c": "ab" verbatim, " " from the white space, "c" verbatim.
        let mut map = SourceMap::default();
        map.push(0, 2, (0, 2), true);
        map.push(2, 1, (2, 5), false);
        map.push(3, 1, (5, 6), true);
        assert_eq!(map.source_span(0, 4), (0, 6));
        assert_eq!(map.source_span(1, 2), (1, 2));
        assert_eq!(map.source_span(3, 4), (5, 6));
        assert_eq!(map.source_span(2, 3), (2, 5));
        assert_eq!(map.text_at(0), 0);
        assert_eq!(map.text_at(1), 1);
        assert_eq!(map.text_at(3), 3);
        assert_eq!(map.text_at(5), 3);
        assert_eq!(map.text_at(9), 4);
        let tail = map.slice(1, 4);
        assert_eq!(tail.source_span(0, 3), (1, 6));
    }

    #[test]
    fn verbatim_stretches_join() {
        let mut map = SourceMap::default();
        map.push(0, 2, (4, 6), true);
        map.push(2, 3, (6, 9), true);
        assert_eq!(map.segments().len(), 1);
        map.push(5, 1, (10, 11), true);
        assert_eq!(map.segments().len(), 2);
    }
}
