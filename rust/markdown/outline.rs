//! The one `CommonMark` parse of a Markdown document: its headings and its cut positions.

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use super::{BLOCK_LEVEL, INNER_LEVEL, STRUCTURE_LEVELS};
use crate::text::source_map::SourceMap;

/// A heading of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heading {
    /// Byte offset of the start of the heading's (first) line.
    pub start: usize,
    /// 1 to 6.
    pub level: u8,
    /// The heading as plain text: inline markup removed, line breaks as spaces, trimmed.
    pub text: String,
    /// False for a section without a name (source code's statements between definitions):
    /// it ends the sections of its level and deeper, and is on no path.
    pub named: bool,
    /// Byte offset of the end of the section's lead, the text that says what follows it
    /// (a Markdown or HTML heading's line; a definition's comments, decorators and
    /// signature, up to the line of its body's first statement), trailing whitespace left
    /// out; `start` when the section has no lead (a one-line definition, a statement group).
    pub lead_end: usize,
}

/// A table of the document (a Markdown pipe table, an HTML `table` outside any other):
/// its byte range, and its header row's when it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    /// Byte offset of the start of the table's first line.
    pub start: usize,
    /// Byte offset of its end.
    pub end: usize,
    /// The byte range of its header row (Markdown: the line above the delimiter row; HTML:
    /// a first row in `thead`, or of `th` cells).
    pub header: Option<(usize, usize)>,
    /// The same range in chars.
    pub header_chars: Option<(usize, usize)>,
}

/// Fills the char ranges of the tables' header rows in `text`, in one pass.
pub fn count_header_chars(text: &str, tables: &mut [Table]) {
    let (mut byte, mut chars) = (0, 0);
    let mut advance = |to: usize| {
        chars += text[byte..to].chars().count();
        byte = to;
        chars
    };
    for table in tables {
        table.header_chars = table
            .header
            .map(|(start, end)| (advance(start), advance(end)));
    }
}

/// The structure of one document: a Markdown document's headings, or a source file's
/// definitions (`code/`), as sections, and its cut positions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outline {
    /// Top-level headings (for source code, its definitions and statement groups), in
    /// document order.
    pub headings: Vec<Heading>,
    /// Per structure level, the sorted, distinct byte offsets where a piece may be cut.
    pub boundaries: [Vec<usize>; STRUCTURE_LEVELS],
    /// The programming language of a source file's outline (its paths are symbol paths);
    /// `None` for Markdown (heading paths).
    pub language: Option<&'static str>,
    /// Per heading, the row of the heading that encloses it (the last one before it of a
    /// higher level; `usize::MAX`: none), made by [`Outline::link`]: a path is followed up
    /// these links, not searched for back through every heading before it (a class of
    /// 10,000 methods, a chapter of 10,000 sections).
    pub enclosing: Vec<usize>,
    /// For a page read from HTML (`html/`): where each part of its text came from in the
    /// page's source; `None` for a text that is its own source.
    pub source_map: Option<SourceMap>,
    /// Its tables, in document order, none inside another.
    pub tables: Vec<Table>,
    /// The byte ranges of a Markdown document's code blocks, in document order: a block
    /// that fits is never cut, not even to join the heading before it.
    pub code_blocks: Vec<(usize, usize)>,
}

impl Outline {
    /// Whether a heading's (first) line starts at byte `position` (a named one).
    #[must_use]
    pub fn starts_heading(&self, position: usize) -> bool {
        self.headings
            .binary_search_by_key(&position, |heading| heading.start)
            .is_ok_and(|row| self.headings[row].named)
    }

    /// The level and lead end of the named heading whose line starts at byte `position`,
    /// when it has a lead (see [`Heading::lead_end`]).
    #[must_use]
    pub fn lead_at(&self, position: usize) -> Option<(u8, usize)> {
        let row = self
            .headings
            .binary_search_by_key(&position, |heading| heading.start)
            .ok()?;
        let heading = &self.headings[row];
        (heading.named && heading.lead_end > heading.start)
            .then_some((heading.level, heading.lead_end))
    }

    /// Fills [`Outline::enclosing`] from the headings, in one pass with a stack.
    pub fn link(&mut self) {
        let mut open: Vec<usize> = Vec::new();
        self.enclosing.clear();
        for (row, heading) in self.headings.iter().enumerate() {
            while open
                .last()
                .is_some_and(|&above| self.headings[above].level >= heading.level)
            {
                open.pop();
            }
            self.enclosing
                .push(open.last().copied().unwrap_or(usize::MAX));
            open.push(row);
        }
    }

    /// The first table that the byte range `start..end` overlaps, if any.
    #[must_use]
    pub fn table_at(&self, start: usize, end: usize) -> Option<(usize, &Table)> {
        let row = self.tables.partition_point(|table| table.end <= start);
        self.tables
            .get(row)
            .filter(|table| table.start < end)
            .map(|table| (row, table))
    }

    /// Whether `start..end` lies inside one code block.
    #[must_use]
    pub fn in_code_block(&self, start: usize, end: usize) -> bool {
        let row = self
            .code_blocks
            .partition_point(|&(_, block_end)| block_end <= start);
        self.code_blocks
            .get(row)
            .is_some_and(|&(block_start, block_end)| block_start <= start && end <= block_end)
    }

    /// Whether this is a source file's outline: paths are symbols, not headings.
    #[must_use]
    pub fn is_code(&self) -> bool {
        self.language.is_some()
    }
}

// Front matter is found by `front_matter`, not by the parser's metadata-block options:
// pulldown-cmark also takes a `---` block after a thematic break, mid-document, for one.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
}

/// The length of a front matter block at the start of `text`: a `---` (YAML) or `+++`
/// (TOML) line, closed by the same line (or `...` for YAML), with its line break; 0 when
/// there is none.
fn front_matter(text: &str) -> usize {
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next() else { return 0 };
    let fence = first.trim_end();
    if fence != "---" && fence != "+++" {
        return 0;
    }
    let mut length = first.len();
    for line in lines {
        length += line.len();
        let closing = line.trim_end();
        if closing == fence || (fence == "---" && closing == "...") {
            return length;
        }
    }
    0
}

fn is_block(tag: &Tag<'_>) -> bool {
    !matches!(
        tag,
        Tag::TableCell
            | Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. }
            | Tag::Image { .. }
    )
}

fn is_block_end(tag: TagEnd) -> bool {
    !matches!(
        tag,
        TagEnd::TableCell
            | TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript
            | TagEnd::Link
            | TagEnd::Image
    )
}

fn heading_number(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// The tables and code blocks open during the parse, closed into the outline at their ends.
#[derive(Default)]
struct BlockSpans {
    table: Option<Table>,
    code_block: Option<usize>,
}

impl BlockSpans {
    /// Notes what `event` (at `range` of `text`) opens or closes of a table or code block.
    fn see(
        &mut self,
        event: &Event<'_>,
        range: &std::ops::Range<usize>,
        text: &str,
        line_starts: &mut LineStarts<'_>,
        outline: &mut Outline,
    ) {
        match event {
            Event::Start(Tag::Table(_)) => {
                self.table = Some(Table {
                    start: line_starts.at(range.start),
                    end: range.end,
                    header: None,
                    header_chars: None,
                });
            }
            Event::Start(Tag::TableHead) => {
                if let Some(open_table) = self.table.as_mut() {
                    let end = range.start + text[range.clone()].trim_end().len();
                    open_table.header = Some((line_starts.at(range.start), end));
                }
            }
            Event::End(TagEnd::Table) => {
                if let Some(mut done) = self.table.take() {
                    done.end = range.start + text[range.clone()].trim_end().len();
                    outline.tables.push(done);
                }
            }
            Event::Start(Tag::CodeBlock(_)) => {
                self.code_block = Some(line_starts.at(range.start));
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(block_start) = self.code_block.take() {
                    outline.code_blocks.push((block_start, range.end));
                }
            }
            _ => {}
        }
    }
}

/// The starts of the lines holding offsets asked in document order: each search for the
/// line break before an offset reads back only to the offset asked before it. A search back
/// to the line's start from every offset would read a long line once per block that opens
/// on it (block quotes and list items nested at its start), quadratic in its length.
struct LineStarts<'b> {
    bytes: &'b [u8],
    /// The offset asked last, and the start of its line.
    searched: usize,
    line: usize,
}

impl<'b> LineStarts<'b> {
    fn new(bytes: &'b [u8]) -> Self {
        Self {
            bytes,
            searched: 0,
            line: 0,
        }
    }

    /// The start of the line holding `offset`.
    fn at(&mut self, offset: usize) -> usize {
        if offset < self.searched {
            return memchr::memrchr(b'\n', &self.bytes[..offset]).map_or(0, |newline| newline + 1);
        }
        if let Some(newline) = memchr::memrchr(b'\n', &self.bytes[self.searched..offset]) {
            self.line = self.searched + newline + 1;
        }
        self.searched = offset;
        self.line
    }
}

impl Outline {
    /// Parses `text` once. A leading byte order mark is not text to the parser (so a
    /// heading on the first line is one), and a leading front matter block is one block,
    /// not Markdown; offsets stay those of `text`.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        let mut line_starts = LineStarts::new(text.as_bytes());
        let mut skipped = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut outline = Self::default();
        let matter = front_matter(&text[skipped..]);
        if matter > 0 {
            outline.boundaries[BLOCK_LEVEL].push(0);
            skipped += matter;
        }
        // Open block tags: true for a list (its items are blocks of the level above).
        let mut open: Vec<bool> = Vec::new();
        let mut heading: Option<Heading> = None;
        let mut spans = BlockSpans::default();
        for (event, range) in Parser::new_ext(&text[skipped..], options()).into_offset_iter() {
            let range = range.start + skipped..range.end + skipped;
            spans.see(&event, &range, text, &mut line_starts, &mut outline);
            match event {
                Event::Start(tag) if is_block(&tag) => {
                    let start = line_starts.at(range.start);
                    let level = match (&tag, open.as_slice()) {
                        (Tag::Heading { level, .. }, []) => {
                            let level = heading_number(*level);
                            heading = Some(Heading {
                                start,
                                level,
                                text: String::new(),
                                named: true,
                                lead_end: start,
                            });
                            usize::from(level) - 1
                        }
                        (_, []) | (Tag::Item, [true]) => BLOCK_LEVEL,
                        _ => INNER_LEVEL,
                    };
                    outline.boundaries[level].push(start);
                    open.push(matches!(tag, Tag::List(_)));
                }
                Event::End(tag) if is_block_end(tag) => {
                    open.pop();
                    if let (TagEnd::Heading(_), true) = (tag, open.is_empty()) {
                        if let Some(mut done) = heading.take() {
                            done.lead_end = range.start + text[range.clone()].trim_end().len();
                            done.text.truncate(done.text.trim_end().len());
                            let blank = done.text.len() - done.text.trim_start().len();
                            done.text.drain(..blank);
                            outline.headings.push(done);
                        }
                    }
                }
                Event::Rule => {
                    let level = if open.is_empty() {
                        BLOCK_LEVEL
                    } else {
                        INNER_LEVEL
                    };
                    outline.boundaries[level].push(line_starts.at(range.start));
                }
                Event::Text(words) | Event::Code(words) => {
                    if let Some(open_heading) = heading.as_mut() {
                        open_heading.text.push_str(&words);
                    }
                }
                Event::SoftBreak | Event::HardBreak => {
                    if let Some(open_heading) = heading.as_mut() {
                        open_heading.text.push(' ');
                    }
                }
                _ => {}
            }
        }
        for level in &mut outline.boundaries {
            // Offsets come in document order; moving them to line starts keeps the order.
            level.dedup();
        }
        count_header_chars(text, &mut outline.tables);
        outline.link();
        outline
    }

    /// For each byte offset in `starts`, the number of headings that begin at or before it:
    /// the heading path of a chunk starting at offset `o` is [`Outline::path`] of that count.
    #[must_use]
    pub fn headings_before(&self, start: usize) -> usize {
        self.headings
            .partition_point(|heading| heading.start <= start)
    }

    /// The rows of the headings that enclose a position after the first `count` headings:
    /// the last of them, and each heading of a higher level before it, outermost first
    /// (a section without a name ends those before it but is not on the path).
    #[must_use]
    pub fn path(&self, count: usize) -> Vec<usize> {
        let mut path = Vec::new();
        if self.enclosing.len() == self.headings.len() {
            let mut row = count.checked_sub(1).unwrap_or(usize::MAX);
            while row != usize::MAX {
                if self.headings[row].named {
                    path.push(row);
                }
                row = self.enclosing[row];
            }
            path.reverse();
            return path;
        }
        let mut above = u8::MAX;
        for row in (0..count).rev() {
            let level = self.headings[row].level;
            if level < above {
                if self.headings[row].named {
                    path.push(row);
                }
                above = level;
                if level == 1 {
                    break;
                }
            }
        }
        path.reverse();
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(outline: &Outline) -> Vec<(u8, &str)> {
        outline
            .headings
            .iter()
            .map(|heading| (heading.level, heading.text.as_str()))
            .collect()
    }

    #[test]
    fn headings_as_plain_text() {
        let text = "# One\n\n## The `Result` *Type*\n\nbody\n\nSetext\ntwo\n---\n";
        let outline = Outline::parse(text);
        assert_eq!(
            texts(&outline),
            [(1, "One"), (2, "The Result Type"), (2, "Setext two")]
        );
        assert_eq!(outline.headings[1].start, 7);
        assert_eq!(outline.boundaries[0], [0]);
        assert_eq!(outline.boundaries[1], [7, 37]);
        assert_eq!(outline.boundaries[BLOCK_LEVEL], [31]);
    }

    #[test]
    fn no_heading_in_code_quotes_or_front_matter() {
        let text = "---\ntitle: x\n---\n\n```\n# not\n```\n\n> # quoted\n\n- # item\n";
        let outline = Outline::parse(text);
        assert!(outline.headings.is_empty());
        assert_eq!(outline.boundaries[BLOCK_LEVEL], [0, 18, 33, 45]);
        // Only at the start: later, `---` lines are a thematic break and a setext underline.
        let later = Outline::parse("- a\n---\nTitle\n---\n");
        assert_eq!(texts(&later), [(2, "Title")]);
        // Unclosed: a thematic break and a paragraph.
        let unclosed = Outline::parse("---\ntitle: x\n");
        assert!(unclosed.headings.is_empty());
        assert_eq!(unclosed.boundaries[BLOCK_LEVEL], [0, 4]);
    }

    #[test]
    fn paths() {
        let text = "# A\n## B\n### C\n## D\n#### E\n";
        let outline = Outline::parse(text);
        let path = |offset| outline.path(outline.headings_before(offset));
        assert_eq!(path(0), [0]);
        assert_eq!(path(10), [0, 1, 2]);
        assert_eq!(path(16), [0, 3]);
        assert_eq!(path(text.len()), [0, 3, 4]);
        assert!(Outline::parse("text").path(0).is_empty());
    }

    #[test]
    fn linked_paths_are_the_searched_ones() {
        let text = "# A\n## B\n### C\n## D\n#### E\n# F\n### G\n## H\n";
        let outline = Outline::parse(text);
        let mut unlinked = outline.clone();
        unlinked.enclosing.clear();
        for count in 0..=outline.headings.len() {
            assert_eq!(outline.path(count), unlinked.path(count), "{count}");
        }
    }

    #[test]
    fn line_starts_agree_with_a_search_back() {
        let text = "ab\n\ncd ef\n> > - x\ny";
        let full = |offset: usize| text[..offset].rfind('\n').map_or(0, |newline| newline + 1);
        let mut line_starts = LineStarts::new(text.as_bytes());
        // In document order, repeated, then back.
        let offsets = (0..=text.len()).chain([7, 7, 3, 0, 12, text.len(), 1]);
        for offset in offsets {
            assert_eq!(line_starts.at(offset), full(offset), "{offset}");
        }
    }

    #[test]
    fn byte_order_mark_before_a_heading() {
        let outline = Outline::parse("\u{feff}# Title\n\ntext\n");
        assert_eq!(texts(&outline), [(1, "Title")]);
        assert_eq!(outline.headings[0].start, 0);
        assert_eq!(outline.boundaries[BLOCK_LEVEL], [12]);
    }
}
