//! Pages of text converted from PDF: where each page starts, from the markers converters
//! write, so that every chunk can say which pages it spans.
//!
//! A [`PagePattern`] is a regular expression (Python's syntax, through `fancy-regex`) whose
//! every match is a page marker. What a match means depends on the named group that took part
//! in it:
//!
//! - `page`: the marker starts page N (a label before the page's text);
//! - `page0`: the marker starts page N + 1 (a label counted from 0);
//! - `end`: the marker ends page N, and page N + 1 follows it;
//! - `end0`: the marker ends page N + 1 (counted from 0), and page N + 2 follows it;
//! - none of them: the marker ends the page it is on, and the next page follows it (a form
//!   feed).
//!
//! A label belongs to the page it starts; any other marker to the page it ends. In an HTML
//! page, markers are read in its comments only. Text before
//! the first marker is on page 1, or on the page the first marker's number implies (a text
//! that starts at page 40 says so with its first marker).

use std::fmt;
use std::sync::LazyLock;

use fancy_regex::{Captures, Regex};

use crate::error::ChunkError;
use crate::text::source_map::SourceMap;

/// The default markers after the form feed, for [`DEFAULT_PAGE_PATTERN`] and
/// [`DEFAULT_WITHOUT_FORM_FEED`].
macro_rules! default_markers_but_form_feed {
    () => {
        concat!(
            r"<!--[ \t]*(?i:page)[ \t_-]*(?i:break)[ \t]*-->",
            r"|<!--[ \t]*(?i:page)[ \t]*[:=#]?[ \t]*(?P<page>[0-9]{1,9})[ \t]*-->",
            r"|^-{3} end of page=(?P<end0>[0-9]{1,9}) -{3}[ \t]*$",
            r"|^\{(?P<page0>[0-9]{1,9})\}-{48}[ \t]*$",
        )
    };
}

/// The markers recognised by default (see `docs/pages.md`): a form feed (pdftotext, and
/// any text printed page by page); an HTML comment saying "page break" (docling's
/// `page_break_placeholder`, the `<!-- PageBreak -->` of Azure's layout model); an HTML comment
/// naming the page (`<!-- page 12 -->`, `<!-- Page: 12 -->`); pymupdf4llm's
/// `--- end of page=N ---` (counted from 0); marker's paginated output, `{N}` and 48 dashes on
/// a line of their own (counted from 0).
pub const DEFAULT_PAGE_PATTERN: &str = concat!(r"(?m)\f|", default_markers_but_form_feed!());

/// [`DEFAULT_PAGE_PATTERN`] without its form feed.
const DEFAULT_WITHOUT_FORM_FEED: &str = concat!(r"(?m)", default_markers_but_form_feed!());

/// [`DEFAULT_PAGE_PATTERN`] compiled once per process: every chunker has it (0.3 ms a
/// compile, against 0.1 ms for the rest of a chunker's construction).
static DEFAULT: LazyLock<Option<PagePattern>> = LazyLock::new(|| {
    let mut pattern = PagePattern::compile(DEFAULT_PAGE_PATTERN).ok()?;
    pattern.without_form_feed = Some(Regex::new(DEFAULT_WITHOUT_FORM_FEED).ok()?);
    Some(pattern)
});

/// The named groups that give a marker's page number.
const GROUPS: [&str; 4] = ["page", "page0", "end", "end0"];

/// A compiled page marker pattern.
#[derive(Clone)]
pub struct PagePattern {
    regex: Regex,
    /// For [`DEFAULT_PAGE_PATTERN`]: the pattern without its form feed, which `find` looks
    /// for with `memchr` instead. With the form feed, the regex's prefilter stops at single
    /// bytes (`\f`, `<`, `-` and `{`, the last two frequent in code) and tries each; without
    /// it, at `<!--`, `--- end of page=` and `{` followed by a digit.
    without_form_feed: Option<Regex>,
}

impl fmt::Debug for PagePattern {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_tuple("PagePattern")
            .field(&self.regex.as_str())
            .finish()
    }
}

impl PartialEq for PagePattern {
    fn eq(&self, other: &Self) -> bool {
        self.regex.as_str() == other.regex.as_str()
    }
}

impl Eq for PagePattern {}

impl PagePattern {
    /// Compiles `pattern`.
    ///
    /// # Errors
    /// A pattern that does not compile, or one that matches empty text (it would mark a page
    /// at every position).
    pub fn new(pattern: &str) -> Result<Self, ChunkError> {
        match DEFAULT.as_ref() {
            Some(default) if pattern == DEFAULT_PAGE_PATTERN => Ok(default.clone()),
            _ => Self::compile(pattern),
        }
    }

    fn compile(pattern: &str) -> Result<Self, ChunkError> {
        let regex = Regex::new(pattern).map_err(|error| {
            ChunkError::setting(
                "pages",
                format!("the page marker pattern {pattern:?} does not compile: {error}"),
            )
        })?;
        if regex.is_match("").unwrap_or(true) {
            return Err(ChunkError::setting(
                "pages",
                format!(
                    "the page marker pattern {pattern:?} matches empty text, so every position \
                     would start a page: make it match the marker itself (for example \\f)"
                ),
            ));
        }
        Ok(Self {
            regex,
            without_form_feed: None,
        })
    }

    /// The pattern as given.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.regex.as_str()
    }

    /// The pages of `text`, or None when it holds no marker.
    ///
    /// # Errors
    /// The pattern gave up on this text (a backtracking pattern over its limit).
    pub fn find(&self, text: &str) -> Result<Option<Pages>, ChunkError> {
        let mut builder = Builder::default();
        let Some(rest) = &self.without_form_feed else {
            for found in self.regex.captures_iter(text) {
                builder.push(&found.map_err(|error| self.failed(&error))?, 0);
            }
            return Ok(builder.finish());
        };
        // The form feeds and the other markers, in text order: no other marker holds a form
        // feed, so the two never overlap and the regex finds the same matches either way.
        let mut form_feeds = memchr::memchr_iter(b'\x0c', text.as_bytes()).peekable();
        for found in rest.captures_iter(text) {
            let found = found.map_err(|error| self.failed(&error))?;
            let start = found.get(0).map_or(0, |whole| whole.start());
            while let Some(position) = form_feeds.next_if(|&position| position < start) {
                builder.mark(position, position + 1, Marker::Break);
            }
            builder.push(&found, 0);
        }
        for position in form_feeds {
            builder.mark(position, position + 1, Marker::Break);
        }
        Ok(builder.finish())
    }

    /// The pages of an HTML page's readable text, from the markers in its `source`'s
    /// `comments` (their byte ranges: a page marker in HTML is a comment, which the readable
    /// text no longer holds), moved into the text by `map`.
    ///
    /// # Errors
    /// As [`PagePattern::find`].
    pub fn find_in_comments(
        &self,
        source: &str,
        comments: &[(usize, usize)],
        map: &SourceMap,
    ) -> Result<Option<Pages>, ChunkError> {
        let mut builder = Builder::default();
        for &(start, end) in comments {
            let Some(comment) = source.get(start..end) else {
                continue;
            };
            for found in self.regex.captures_iter(comment) {
                builder.push(&found.map_err(|error| self.failed(&error))?, start);
            }
        }
        Ok(builder.finish().map(|mut pages| {
            for mark in &mut pages.marks {
                mark.0 = map.text_at(mark.0);
            }
            pages
        }))
    }

    fn failed(&self, error: &fancy_regex::Error) -> ChunkError {
        ChunkError::setting(
            "pages",
            format!(
                "the page marker pattern {:?} failed on a document: {error}; simplify it (no \
                 backreferences or look-around over long text)",
                self.regex.as_str()
            ),
        )
    }
}

/// What a marker says.
#[derive(Debug, Clone, Copy)]
enum Marker {
    /// It starts page N.
    Starts(u32),
    /// It ends page N.
    Ends(u32),
    /// It ends the page it is on.
    Break,
}

/// Marks gathered in text order.
#[derive(Debug, Default)]
struct Builder {
    /// The page of the text before the first marker, once a marker has said it.
    first: Option<u32>,
    marks: Vec<(usize, u32)>,
}

impl Builder {
    /// A marker found at `captures`, in a text that starts at byte `offset`.
    fn push(&mut self, captures: &Captures<'_, str>, offset: usize) {
        let Some(whole) = captures.get(0) else {
            return;
        };
        let (start, end) = (offset + whole.start(), offset + whole.end());
        let marker = GROUPS
            .iter()
            .find_map(|&name| {
                let number: u32 = captures.name(name)?.as_str().parse().ok()?;
                Some(match name {
                    "page" => Marker::Starts(number),
                    "page0" => Marker::Starts(number.saturating_add(1)),
                    "end" => Marker::Ends(number),
                    _ => Marker::Ends(number.saturating_add(1)),
                })
            })
            .unwrap_or(Marker::Break);
        self.mark(start, end, marker);
    }

    /// A marker at `start..end`.
    fn mark(&mut self, start: usize, end: usize, marker: Marker) {
        let current = self
            .marks
            .last()
            .map_or(self.first, |&(_, page)| Some(page));
        let (boundary, page) = match marker {
            Marker::Starts(page) => {
                if current.is_none() {
                    self.first = Some(page.saturating_sub(1).max(1));
                }
                (start, page)
            }
            Marker::Ends(page) => {
                if current.is_none() {
                    self.first = Some(page);
                }
                (end, page.saturating_add(1))
            }
            Marker::Break => (end, current.unwrap_or(1).saturating_add(1)),
        };
        // Two markers at one position (a label right after a break): the later one says.
        if self.marks.last().is_some_and(|&(last, _)| last == boundary) {
            self.marks.pop();
        }
        self.marks.push((boundary, page));
    }

    fn finish(self) -> Option<Pages> {
        if self.marks.is_empty() {
            return None;
        }
        Some(Pages {
            first: self.first.unwrap_or(1),
            marks: self.marks,
        })
    }
}

/// The pages of one document: the page of its first text, and every position where another
/// page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pages {
    first: u32,
    /// `(byte, page)`: from `byte` on, the text is on `page`; sorted by byte.
    marks: Vec<(usize, u32)>,
}

impl Pages {
    /// The page of the text at byte `position`.
    #[must_use]
    pub fn at(&self, position: usize) -> u32 {
        let row = self.marks.partition_point(|&(start, _)| start <= position);
        row.checked_sub(1)
            .map_or(self.first, |row| self.marks[row].1)
    }

    /// The first and last page of the text at bytes `start..end` (a chunk).
    #[must_use]
    pub fn span(&self, start: usize, end: usize) -> (u32, u32) {
        let first = self.at(start);
        let last = self.at(end.saturating_sub(1).max(start));
        (first, last.max(first))
    }

    /// Where each page starts: `(byte, page)`, the first page at byte 0.
    #[must_use]
    pub fn starts(&self) -> Vec<(usize, u32)> {
        let mut starts = vec![(0, self.first)];
        for &(start, page) in &self.marks {
            if starts.last().is_some_and(|&(last, _)| last == start) {
                starts.pop();
            }
            if starts.last().is_none_or(|&(_, last)| last != page) {
                starts.push((start, page));
            }
        }
        starts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_pattern_is_pinned() {
        // What stores record and `spanchunk.DEFAULT_PAGE_PATTERN` gives: a change is a
        // change of every default setting.
        assert_eq!(
            DEFAULT_PAGE_PATTERN,
            concat!(
                r"(?m)\f",
                r"|<!--[ \t]*(?i:page)[ \t_-]*(?i:break)[ \t]*-->",
                r"|<!--[ \t]*(?i:page)[ \t]*[:=#]?[ \t]*(?P<page>[0-9]{1,9})[ \t]*-->",
                r"|^-{3} end of page=(?P<end0>[0-9]{1,9}) -{3}[ \t]*$",
                r"|^\{(?P<page0>[0-9]{1,9})\}-{48}[ \t]*$",
            )
        );
    }

    #[test]
    fn form_feeds_apart_find_what_the_whole_pattern_finds() {
        // The default's `find` (form feeds by memchr, the rest by a regex) against the whole
        // pattern in one regex, on texts made of markers, near misses and text.
        let whole = PagePattern::compile(DEFAULT_PAGE_PATTERN).unwrap();
        let split = PagePattern::new(DEFAULT_PAGE_PATTERN).unwrap();
        assert!(whole.without_form_feed.is_none() && split.without_form_feed.is_some());
        let dashes = "-".repeat(48);
        let pieces = [
            "\x0c".to_owned(),
            "\n".to_owned(),
            "text ".to_owned(),
            "<!-- page 7 -->".to_owned(),
            "<!-- PageBreak -->".to_owned(),
            "<!--".to_owned(),
            "--- end of page=3 ---".to_owned(),
            format!("{{4}}{dashes}"),
            "{12}".to_owned(),
            "-".to_owned(),
            "{".to_owned(),
            " \t".to_owned(),
            "é".to_owned(),
        ];
        let mut state = 0x2545_f491_u64;
        let mut marked = 0;
        for _ in 0..3000 {
            let mut text = String::new();
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            for _ in 0..(state >> 59) {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let index = usize::try_from(state >> 33).unwrap() % pieces.len();
                text.push_str(&pieces[index]);
            }
            let found = whole.find(&text).unwrap();
            marked += usize::from(found.as_ref().is_some_and(|pages| pages.marks.len() > 2));
            assert_eq!(split.find(&text).unwrap(), found, "{text:?}");
        }
        assert!(marked > 1000, "{marked} texts with three marks or more");
    }

    fn pages(text: &str) -> Vec<(usize, u32)> {
        PagePattern::new(DEFAULT_PAGE_PATTERN)
            .unwrap()
            .find(text)
            .unwrap()
            .map(|pages| pages.starts())
            .unwrap_or_default()
    }

    #[test]
    fn no_marker_no_pages() {
        assert_eq!(pages("one page\n\nof text"), vec![]);
    }

    #[test]
    fn form_feeds_end_pages() {
        let text = "one\x0ctwo\x0cthree";
        assert_eq!(pages(text), vec![(0, 1), (4, 2), (8, 3)]);
        let found = PagePattern::new(DEFAULT_PAGE_PATTERN)
            .unwrap()
            .find(text)
            .unwrap()
            .unwrap();
        // The form feed is the end of the page before it.
        assert_eq!(found.span(0, 4), (1, 1));
        assert_eq!(found.span(2, 5), (1, 2));
        assert_eq!(found.span(8, 13), (3, 3));
    }

    #[test]
    fn converters_markers() {
        // docling's placeholder, Azure's, a comment per page.
        let text = "a\n<!-- page break -->\nb\n<!-- PageBreak -->\nc";
        let ends = |marker: &str| text.find(marker).unwrap() + marker.len();
        assert_eq!(
            pages(text),
            vec![(0, 1), (ends("break -->"), 2), (ends("Break -->"), 3)]
        );
        assert_eq!(
            pages("<!-- Page 7 -->\na\n<!-- page: 8 -->\nb"),
            vec![(0, 7), (18, 8)]
        );
        // pymupdf4llm: page 0 ends, counted from 0.
        let text = "a\n\n--- end of page=0 ---\n\nb\n\n--- end of page=1 ---\n\n";
        let ends = |marker: &str| text.find(marker).unwrap() + marker.len();
        assert_eq!(
            pages(text),
            vec![(0, 1), (ends("page=0 ---"), 2), (ends("page=1 ---"), 3)]
        );
        // marker: {N} and 48 dashes start page N + 1.
        let dashes = "-".repeat(48);
        let text = format!("\n\n{{0}}{dashes}\n\na\n\n{{1}}{dashes}\n\nb");
        assert_eq!(pages(&text), vec![(0, 1), (text.find("{1}").unwrap(), 2)]);
    }

    #[test]
    fn first_marker_says_where_the_text_starts() {
        assert_eq!(
            pages("a\n--- end of page=39 ---\nb"),
            vec![(0, 40), (24, 41)]
        );
        assert_eq!(pages("a\n<!-- page 12 -->\nb"), vec![(0, 11), (2, 12)]);
    }

    #[test]
    fn custom_patterns() {
        let pattern = PagePattern::new(r"(?m)^\[p\.(?P<page>\d+)\]$").unwrap();
        let found = pattern.find("[p.3]\nx\n[p.4]\ny").unwrap().unwrap();
        assert_eq!(found.starts(), vec![(0, 3), (8, 4)]);
        let pattern = PagePattern::new("=== END (?P<end>\\d+) ===").unwrap();
        let found = pattern.find("x=== END 5 ===y").unwrap().unwrap();
        assert_eq!(found.starts(), vec![(0, 5), (14, 6)]);
    }

    #[test]
    fn bad_patterns_are_refused() {
        let error = PagePattern::new("(").unwrap_err().to_string();
        assert!(
            error.starts_with("pages: the page marker pattern"),
            "{error}"
        );
        let error = PagePattern::new("x*").unwrap_err().to_string();
        assert!(error.contains("matches empty text"), "{error}");
    }

    #[test]
    fn html_markers_move_into_the_text() {
        let mut map = SourceMap::default();
        // "ab" from bytes 3..5, "cd" from bytes 23..25, both verbatim.
        map.push(0, 2, (3, 5), true);
        map.push(2, 2, (23, 25), true);
        let found = PagePattern::new(DEFAULT_PAGE_PATTERN)
            .unwrap()
            .find_in_comments("<p>ab<!-- page 2 --><p>cd", &[(5, 20)], &map)
            .unwrap()
            .unwrap();
        assert_eq!(found.starts(), vec![(0, 1), (2, 2)]);
    }
}
