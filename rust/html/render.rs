//! The one pass over a page: the tokenizer's events made into readable text as a browser lays
//! it out (blocks on their own lines, white space collapsed, `pre` kept), with the outline of
//! that text and the map back to the source.

use super::elements::{role, slot, Name, Role};
use crate::markdown::{Heading, Table, BLOCK_LEVEL, INNER_LEVEL, STRUCTURE_LEVELS};
use crate::text::source_map::SourceMap;

/// A start tag being read: its name, where it starts, and the attributes that matter.
struct StartTag {
    name: Name,
    start: usize,
    alt: Option<String>,
    main: bool,
}

/// The attributes the text depends on: an image's `alt`, and `role` (`role="main"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attribute {
    Alt,
    Role,
    Other,
}

/// An open element.
#[allow(clippy::struct_excessive_bools)] // what its end undoes, one flag each
struct Open {
    name: Name,
    role: Role,
    /// Opened inside a dropped element: it does nothing.
    inert: bool,
    /// The page's main content (`main`, `role="main"`) or its first `article`.
    main: bool,
    article: bool,
    /// A heading whose text is being collected.
    heading: bool,
}

/// A table outside any other being read: where its text and its current row start, and
/// whether that row is its header.
#[derive(Default)]
struct OpenTable {
    start: Option<usize>,
    header: Option<(usize, usize)>,
    rows: u32,
    row_start: Option<usize>,
    row_pending: bool,
    row_is_header: bool,
    in_head: bool,
}

/// A heading being read: its level and where its text starts.
struct OpenHeading {
    level: u8,
    start: Option<usize>,
}

/// The readable text and structure of a page, before the main content is chosen.
pub(crate) struct Rendered {
    pub(crate) text: String,
    pub(crate) map: SourceMap,
    pub(crate) headings: Vec<Heading>,
    pub(crate) boundaries: [Vec<usize>; STRUCTURE_LEVELS],
    /// Its tables outside any other, in order.
    pub(crate) tables: Vec<Table>,
    /// The text range of the page's main content, when it marks one.
    pub(crate) main: Option<(usize, usize)>,
    /// The text range of its first `article`, and how many it has.
    pub(crate) article: Option<(usize, usize)>,
    pub(crate) articles: usize,
}

pub(crate) struct Renderer<'s> {
    source: &'s str,
    out: Rendered,
    stack: Vec<Open>,
    /// How many elements of each [`slot`] are open.
    open_slots: [u32; slot::COUNT],
    dropped: u32,
    preformatted: u32,
    containers: u32,
    lists: u32,
    head: bool,
    /// Cells seen in each open table row.
    rows: Vec<u32>,
    /// Open tables, and the outermost one's rows.
    tables: u32,
    table: Option<OpenTable>,
    tag: Option<StartTag>,
    /// The attribute being read, when it is one that matters.
    attribute: Attribute,
    /// Separators owed before the next text: line breaks (and where), a cell separator, a
    /// collapsed space (where it was).
    breaks: u8,
    break_at: usize,
    cell_at: Option<usize>,
    space_at: Option<usize>,
    /// Structure levels (bits) whose boundary is at the next text.
    marks: u16,
    heading: Option<OpenHeading>,
    /// The first line feed of a `pre` is not text.
    skip_newline: bool,
    main_start: Option<usize>,
    article_start: Option<usize>,
}

impl<'s> Renderer<'s> {
    pub(crate) fn new(source: &'s str) -> Self {
        Self {
            source,
            out: Rendered {
                text: String::with_capacity(source.len() / 3),
                map: SourceMap::default(),
                headings: Vec::new(),
                boundaries: Default::default(),
                tables: Vec::new(),
                main: None,
                article: None,
                articles: 0,
            },
            stack: Vec::new(),
            open_slots: [0; slot::COUNT],
            dropped: 0,
            preformatted: 0,
            containers: 0,
            lists: 0,
            head: false,
            rows: Vec::new(),
            tables: 0,
            table: None,
            tag: None,
            attribute: Attribute::Other,
            breaks: 0,
            break_at: 0,
            cell_at: None,
            space_at: None,
            marks: 0,
            heading: None,
            skip_newline: false,
            main_start: None,
            article_start: None,
        }
    }

    pub(crate) fn open_start_tag(&mut self, name: &[u8], start: usize) {
        self.tag = Some(StartTag {
            name: Name::new(name),
            start,
            alt: None,
            main: false,
        });
    }

    pub(crate) fn attribute_name(&mut self, name: &[u8]) {
        self.attribute = match name {
            b"alt" => Attribute::Alt,
            b"role" => Attribute::Role,
            _ => Attribute::Other,
        };
    }

    pub(crate) fn attribute_value(&mut self, value: &[u8]) {
        let Some(tag) = self.tag.as_mut() else { return };
        if self.attribute == Attribute::Alt && tag.name.is(b"img") {
            tag.alt = Some(String::from_utf8_lossy(value).into_owned());
        } else if self.attribute == Attribute::Role && value.eq_ignore_ascii_case(b"main") {
            tag.main = true;
        }
    }

    pub(crate) fn close_start_tag(&mut self, self_closing: bool, end: usize) {
        let Some(tag) = self.tag.take() else { return };
        self.skip_newline = false;
        let name = tag.name.as_bytes();
        if matches!(name, b"html" | b"body") {
            if name == b"body" {
                self.end_head();
            }
            return;
        }
        let role = role(name);
        if self.head && !role.in_head {
            self.end_head();
        }
        let inert = self.dropped > 0 || self.head;
        if !inert {
            self.close_implied(&tag.name, role);
        }
        if role.void || (self_closing && self.dropped > 0) {
            if !inert {
                self.void_element(&tag, role, end);
            }
            return;
        }
        let mut open = Open {
            name: tag.name,
            role,
            inert,
            main: false,
            article: false,
            heading: false,
        };
        if name == b"head" {
            self.head = true;
        }
        if inert {
            if role.dropped {
                self.dropped += 1;
            }
        } else {
            self.start_element(&mut open, &tag);
        }
        self.open_slots[usize::from(open.role.slot)] += 1;
        self.stack.push(open);
    }

    fn start_element(&mut self, open: &mut Open, tag: &StartTag) {
        if open.role.list && self.lists > 0 {
            // A list inside a list is lines of it, not a paragraph.
            open.role.breaks = 1;
        }
        let role = open.role;
        if role.dropped {
            self.dropped += 1;
            return;
        }
        self.request_breaks(role.breaks, tag.start);
        if role.heading > 0 {
            if self.heading.is_none() {
                self.heading = Some(OpenHeading {
                    level: role.heading,
                    start: None,
                });
                open.heading = true;
            }
            self.marks |= 1 << (role.heading - 1);
        } else if role.row {
            self.marks |= 1 << INNER_LEVEL;
        } else if role.container && role.breaks == 1 {
            // A list item: a block of the list's level.
            let level = if self.containers == 0 && self.lists <= 1 {
                BLOCK_LEVEL
            } else {
                INNER_LEVEL
            };
            self.marks |= 1 << level;
        } else if role.breaks > 0 {
            self.marks |= 1 << self.block_level();
        }
        if role.cell {
            if let Some(cells) = self.rows.last_mut() {
                if *cells > 0 {
                    self.cell_at = Some(tag.start);
                }
                *cells += 1;
            }
        }
        if role.row {
            self.rows.push(0);
        }
        self.start_table_part(tag.name.as_bytes(), role);
        if role.preformatted {
            self.preformatted += 1;
            self.skip_newline = true;
        }
        if role.list {
            self.lists += 1;
        }
        if role.container {
            self.containers += 1;
        }
        if self.main_start.is_none()
            && self.out.main.is_none()
            && (tag.main || tag.name.is(b"main"))
        {
            self.main_start = Some(self.out.text.len());
            open.main = true;
        }
        if tag.name.is(b"article") {
            self.out.articles += 1;
            if self.out.articles == 1 {
                self.article_start = Some(self.out.text.len());
                open.article = true;
            }
        }
    }

    /// The outermost table being read, when an element is directly in it (no other table
    /// open inside it).
    fn outermost_table(&mut self) -> Option<&mut OpenTable> {
        if self.tables == 1 {
            self.table.as_mut()
        } else {
            None
        }
    }

    /// Keeps the outermost table's rows: where each starts, and whether the first is a
    /// header (in `thead`, or of `th` cells).
    fn start_table_part(&mut self, name: &[u8], role: Role) {
        if role.table {
            self.tables += 1;
            if self.tables == 1 {
                self.table = Some(OpenTable::default());
            }
            return;
        }
        let Some(table) = self.outermost_table() else {
            return;
        };
        match name {
            b"thead" => table.in_head = true,
            b"tbody" | b"tfoot" => table.in_head = false,
            b"tr" => {
                table.rows += 1;
                table.row_start = None;
                table.row_pending = true;
                table.row_is_header = table.in_head;
            }
            b"th" => table.row_is_header = true,
            _ => {}
        }
    }

    fn end_table_part(&mut self, name: &[u8], role: Role) {
        let here = self.out.text.len();
        if role.table {
            self.tables = self.tables.saturating_sub(1);
            if self.tables == 0 {
                if let Some(OpenTable {
                    start: Some(start),
                    header,
                    ..
                }) = self.table.take()
                {
                    self.out.tables.push(Table {
                        start,
                        end: here,
                        header,
                        header_chars: None,
                    });
                }
            }
            return;
        }
        let Some(table) = self.outermost_table() else {
            return;
        };
        match name {
            b"thead" => table.in_head = false,
            b"tr" => {
                if let (1, true, Some(start)) = (table.rows, table.row_is_header, table.row_start) {
                    table.header = Some((start, here));
                }
                table.row_pending = false;
            }
            _ => {}
        }
    }

    fn block_level(&self) -> usize {
        if self.containers == 0 {
            BLOCK_LEVEL
        } else {
            INNER_LEVEL
        }
    }

    fn void_element(&mut self, tag: &StartTag, role: Role, end: usize) {
        if role.breaks == 1 {
            // `br`: a line break; two in a row leave a blank line.
            self.breaks = (self.breaks + 1).min(2);
            self.break_at = tag.start;
            self.space_at = None;
        } else if role.breaks == 2 {
            self.request_breaks(2, tag.start);
            self.marks |= 1 << self.block_level();
        }
        if let Some(alt) = &tag.alt {
            let mut words = alt.split_ascii_whitespace().peekable();
            if words.peek().is_some() {
                let alt: Vec<&str> = words.collect();
                self.emit(&alt.join(" "), (tag.start, end), false);
            }
        }
    }

    fn request_breaks(&mut self, breaks: u8, at: usize) {
        if breaks > self.breaks {
            self.breaks = breaks;
            self.break_at = at;
        }
        if breaks > 0 {
            self.space_at = None;
            self.cell_at = None;
        }
    }

    /// The end tags HTML implies when `name` starts: an open `p` before a block, the open
    /// item, cell or row before the next one, an open heading before another.
    fn close_implied(&mut self, name: &Name, role: Role) {
        if role.closes_paragraph {
            self.close_nearest(
                [slot::P],
                [b"table", b"td", b"th", b"caption", b"button", b"template"],
            );
        }
        if role.heading > 0 && self.stack.last().is_some_and(|open| open.role.heading > 0) {
            self.pop();
        }
        match name.as_bytes() {
            b"li" => self.close_nearest([slot::LI], [b"ul", b"ol", b"menu", b"dir", b"table"]),
            b"dt" | b"dd" => self.close_nearest([slot::DT, slot::DD], [b"dl", b"table"]),
            b"tr" => self.close_nearest([slot::TR], [b"table"]),
            b"td" | b"th" => self.close_nearest([slot::TD, slot::TH], [b"tr", b"table"]),
            b"thead" | b"tbody" | b"tfoot" => {
                self.close_nearest([slot::THEAD, slot::TBODY, slot::TFOOT], [b"table"]);
            }
            b"option" | b"optgroup" => self.close_nearest([slot::OPTION], [b"select"]),
            _ => {}
        }
    }

    /// Closes the nearest open element of `slots` (and every element opened after it),
    /// unless one named in `stops` is nearer.
    fn close_nearest<const N: usize, const M: usize>(&mut self, slots: [u8; N], stops: [&[u8]; M]) {
        if !slots
            .iter()
            .any(|&slot| self.open_slots[usize::from(slot)] > 0)
        {
            return;
        }
        let stops = stops.map(Name::new);
        let Some(row) = self
            .stack
            .iter()
            .rposition(|open| slots.contains(&open.role.slot) || stops.contains(&open.name))
        else {
            return;
        };
        if slots.contains(&self.stack[row].role.slot) {
            while self.stack.len() > row {
                self.pop();
            }
        }
    }

    pub(crate) fn end_tag(&mut self, name: &[u8], start: usize) {
        self.skip_newline = false;
        let name = Name::new(name);
        match name.as_bytes() {
            b"html" | b"body" => return,
            b"head" => {
                self.end_head();
                return;
            }
            b"br" if self.dropped == 0 && !self.head => {
                let tag = StartTag {
                    name,
                    start,
                    alt: None,
                    main: false,
                };
                self.void_element(&tag, role(b"br"), start);
                return;
            }
            b"p" if self.open_slots[usize::from(slot::P)] == 0 => {
                if self.dropped == 0 && !self.head {
                    self.request_breaks(2, start);
                }
                return;
            }
            _ => {}
        }
        // Open? By its count for an element with a slot, else by the open elements, nearest
        // first (an end tag most often ends the last one opened).
        let open = match role(name.as_bytes()).slot {
            0 => self.stack.iter().rev().any(|open| open.name == name),
            place => self.open_slots[usize::from(place)] > 0,
        };
        if !open {
            return;
        }
        while let Some(open) = self.stack.last() {
            let done = open.name == name;
            self.pop();
            if done {
                break;
            }
        }
        if self.out.text.is_empty() {
            return;
        }
        // Where a block ends, the breaks after it point at its end tag.
        if self.breaks > 0 && self.break_at < start {
            self.break_at = start;
        }
    }

    fn end_head(&mut self) {
        if !self.head {
            return;
        }
        while let Some(open) = self.stack.last() {
            let done = open.name.is(b"head");
            self.pop();
            if done {
                break;
            }
        }
        self.head = false;
    }

    fn pop(&mut self) {
        let Some(open) = self.stack.pop() else { return };
        let count = &mut self.open_slots[usize::from(open.role.slot)];
        *count = count.saturating_sub(1);
        if open.name.is(b"head") {
            self.head = false;
        }
        let role = open.role;
        if role.dropped {
            self.dropped = self.dropped.saturating_sub(1);
        }
        if open.inert || role.dropped {
            return;
        }
        if role.breaks > 0 {
            let at = self.break_at;
            self.request_breaks(role.breaks, at);
        }
        if open.heading {
            self.end_heading();
        }
        if role.preformatted {
            self.preformatted -= 1;
        }
        if role.list {
            self.lists -= 1;
        }
        if role.container {
            self.containers -= 1;
        }
        if role.row {
            self.rows.pop();
        }
        self.end_table_part(open.name.as_bytes(), role);
        let here = self.out.text.len();
        if open.main {
            if let Some(start) = self.main_start.take() {
                self.out.main = Some((start, here));
            }
        }
        if open.article {
            if let Some(start) = self.article_start.take() {
                self.out.article = Some((start, here));
            }
        }
    }

    fn end_heading(&mut self) {
        let Some(heading) = self.heading.take() else {
            return;
        };
        let bit = 1 << (heading.level - 1);
        match heading.start {
            None => self.marks &= !bit,
            Some(start) => {
                let words: Vec<&str> = self.out.text[start..].split_whitespace().collect();
                if !words.is_empty() {
                    self.out.headings.push(Heading {
                        start,
                        level: heading.level,
                        text: words.join(" "),
                        named: true,
                        lead_end: start + self.out.text[start..].trim_end().len(),
                    });
                }
            }
        }
    }

    /// A run of character data: `value` decoded, `raw` its source at `start`.
    pub(crate) fn text(&mut self, value: &[u8], start: usize, end: usize) {
        if self.dropped > 0 || self.head {
            self.skip_newline = false;
            return;
        }
        let raw = &self.source.as_bytes()[start..end];
        let (mut value, mut start) = (value, start);
        let mut raw = raw;
        if std::mem::take(&mut self.skip_newline) && value.first() == Some(&b'\n') {
            let skipped = if raw.starts_with(b"\r\n") { 2 } else { 1 };
            value = &value[1..];
            if raw
                .first()
                .is_some_and(|&byte| byte == b'\n' || byte == b'\r')
            {
                raw = &raw[skipped.min(raw.len())..];
                start += skipped.min(end - start);
            }
        }
        // Most runs hold no character reference, CR or NUL: their text is their source, one
        // verbatim piece read from the page itself (no UTF-8 check, no comparison).
        let source = self.source;
        if memchr::memchr3(b'&', b'\r', 0, raw).is_none() {
            if let Some(text) = source.get(start..end) {
                self.piece(text, (start, end), true);
                return;
            }
        }
        let Ok(value) = std::str::from_utf8(value) else {
            return;
        };
        if value.as_bytes() == raw {
            self.piece(value, (start, end), true);
            return;
        }
        for piece in align(value.as_bytes(), raw) {
            let text = &value[piece.value.0..piece.value.1];
            self.piece(
                text,
                (start + piece.raw.0, start + piece.raw.1),
                piece.verbatim,
            );
        }
    }

    /// A piece of a run of character data and its source.
    fn piece(&mut self, text: &str, source: (usize, usize), verbatim: bool) {
        if self.preformatted > 0 {
            self.emit(text, source, verbatim);
        } else if verbatim {
            self.collapsed(text, source.0);
        } else if text.bytes().all(|byte| byte.is_ascii_whitespace()) {
            self.space_at.get_or_insert(source.0);
        } else {
            self.emit(text, source, false);
        }
    }

    /// Verbatim text outside `pre`: its words, each run of white space one space.
    fn collapsed(&mut self, text: &str, source: usize) {
        let bytes = text.as_bytes();
        // Most runs are words with single spaces between them, which collapse to themselves:
        // one piece, not one per word.
        let first = bytes.iter().position(|byte| !byte.is_ascii_whitespace());
        let last = bytes.iter().rposition(|byte| !byte.is_ascii_whitespace());
        if let (Some(first), Some(last)) = (first, last) {
            if single_spaced(&bytes[first..=last]) {
                if first > 0 {
                    self.space_at.get_or_insert(source);
                }
                self.emit(
                    &text[first..=last],
                    (source + first, source + last + 1),
                    true,
                );
                if last + 1 < bytes.len() {
                    self.space_at.get_or_insert(source + last + 1);
                }
                return;
            }
        }
        let mut position = 0;
        while position < bytes.len() {
            let word_start = position
                + bytes[position..]
                    .iter()
                    .position(|byte| !byte.is_ascii_whitespace())
                    .unwrap_or(bytes.len() - position);
            if word_start > position {
                self.space_at.get_or_insert(source + position);
            }
            if word_start == bytes.len() {
                break;
            }
            let word_end = word_start
                + bytes[word_start..]
                    .iter()
                    .position(u8::is_ascii_whitespace)
                    .unwrap_or(bytes.len() - word_start);
            self.emit(
                &text[word_start..word_end],
                (source + word_start, source + word_end),
                true,
            );
            position = word_end;
        }
    }

    /// Appends visible text, after the separators owed before it.
    fn emit(&mut self, text: &str, source: (usize, usize), verbatim: bool) {
        if text.is_empty() {
            return;
        }
        let out = &mut self.out;
        if !out.text.is_empty() {
            if self.breaks > 0 {
                let breaks = if self.breaks >= 2 { "\n\n" } else { "\n" };
                out.map.push(
                    out.text.len(),
                    breaks.len(),
                    (self.break_at, self.break_at),
                    false,
                );
                out.text.push_str(breaks);
            } else if let Some(at) = self.cell_at {
                out.map.push(out.text.len(), 3, (at, at), false);
                out.text.push_str(" | ");
            } else if let Some(at) = self.space_at {
                let single = self.source.as_bytes().get(at) == Some(&b' ');
                out.map.push(out.text.len(), 1, (at, at + 1), single);
                out.text.push(' ');
            }
        }
        self.breaks = 0;
        self.cell_at = None;
        self.space_at = None;
        let here = out.text.len();
        if self.marks != 0 {
            for (level, positions) in out.boundaries.iter_mut().enumerate() {
                if self.marks & (1 << level) != 0 {
                    positions.push(here);
                }
            }
            self.marks = 0;
        }
        if let Some(heading) = self.heading.as_mut() {
            heading.start.get_or_insert(here);
        }
        if let Some(table) = self.table.as_mut() {
            table.start.get_or_insert(here);
            if std::mem::take(&mut table.row_pending) {
                table.row_start = Some(here);
            }
        }
        out.map.push(here, text.len(), source, verbatim);
        out.text.push_str(text);
    }

    pub(crate) fn finish(mut self) -> Rendered {
        while !self.stack.is_empty() {
            self.pop();
        }
        let here = self.out.text.len();
        if let Some(start) = self.main_start.take() {
            self.out.main = Some((start, here));
        }
        if let Some(start) = self.article_start.take() {
            self.out.article = Some((start, here));
        }
        self.out
    }
}

/// Whether `bytes` (no white space at either end) hold no white space but single spaces.
fn single_spaced(bytes: &[u8]) -> bool {
    let mut space = false;
    for &byte in bytes {
        if byte == b' ' {
            if space {
                return false;
            }
            space = true;
        } else if byte.is_ascii_whitespace() {
            return false;
        } else {
            space = false;
        }
    }
    true
}

/// A piece of a run of character data: its decoded bytes, its source bytes, and whether the
/// two are the same.
struct Piece {
    value: (usize, usize),
    raw: (usize, usize),
    verbatim: bool,
}

/// The decoded text of a run aligned with its source: verbatim stretches, and between them
/// each character reference (or normalised line break) as one piece.
fn align(value: &[u8], raw: &[u8]) -> Vec<Piece> {
    let mut pieces = Vec::new();
    let (mut i, mut k) = (0, 0);
    let (mut run_i, mut run_k) = (0, 0);
    let flush = |pieces: &mut Vec<Piece>, from: (usize, usize), to: (usize, usize)| {
        if to.0 > from.0 {
            pieces.push(Piece {
                value: (from.0, to.0),
                raw: (from.1, to.1),
                verbatim: true,
            });
        }
    };
    while i < value.len() {
        if k < raw.len() && raw[k] == value[i] {
            i += 1;
            k += 1;
            continue;
        }
        flush(&mut pieces, (run_i, run_k), (i, k));
        let resumed = if raw.get(k) == Some(&b'\r') && raw.get(k + 1) == Some(&b'\n') {
            // CR LF is a line feed: the CR alone is dropped.
            Some((i, k + 1))
        } else if raw.get(k) == Some(&b'&') {
            reference_end(value, raw, i, k)
        } else if raw.get(k) == Some(&b'\r') {
            Some((i + 1, k + 1))
        } else {
            None
        };
        let Some((next_i, next_k)) = resumed else {
            // Nothing to align by: the rest is one piece.
            pieces.push(Piece {
                value: (i, value.len()),
                raw: (k, raw.len()),
                verbatim: false,
            });
            return pieces;
        };
        if next_i > i {
            pieces.push(Piece {
                value: (i, next_i),
                raw: (k, next_k),
                verbatim: false,
            });
        }
        (i, k) = (next_i, next_k);
        (run_i, run_k) = (i, k);
    }
    flush(&mut pieces, (run_i, run_k), (i, k));
    if let Some(last) = pieces.last_mut() {
        if k < raw.len() {
            last.raw.1 = raw.len();
            last.verbatim = false;
        }
    }
    pieces
}

/// Where the character reference at `raw[k]` (decoded at `value[i]`) ends in both: one or
/// two decoded chars, after which the two agree again.
fn reference_end(value: &[u8], raw: &[u8], i: usize, k: usize) -> Option<(usize, usize)> {
    let name_end = raw[k + 1..]
        .iter()
        .take(40)
        .position(|byte| !(byte.is_ascii_alphanumeric() || *byte == b'#'))
        .map_or(raw.len().min(k + 41), |length| k + 1 + length);
    let with_semicolon = name_end + usize::from(raw.get(name_end) == Some(&b';'));
    let first = char_length(value, i);
    let second = first + char_length(value, i + first);
    for decoded in [first, second] {
        if decoded == 0 || i + decoded > value.len() {
            continue;
        }
        for end in (k + 2..=with_semicolon).rev() {
            if value[i + decoded..].first() == raw.get(end)
                || (i + decoded == value.len() && end == raw.len())
            {
                return Some((i + decoded, end));
            }
        }
    }
    None
}

fn char_length(value: &[u8], at: usize) -> usize {
    match value.get(at) {
        None => 0,
        Some(&byte) if byte < 0x80 => 1,
        Some(&byte) if byte >= 0xF0 => 4,
        Some(&byte) if byte >= 0xE0 => 3,
        Some(_) => 2,
    }
}
