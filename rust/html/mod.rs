//! HTML structure for the splitting engine: one pass of a WHATWG HTML5 tokenizer
//! (`html5gum`, with source spans) turns a page into the text a reader sees, the outline of
//! that text (the same structure levels as Markdown's, see `markdown/`), and a map from the
//! text back to the page's bytes.
//!
//! The text: block elements end paragraphs, list items and table rows end lines (a row's
//! cells joined by ` | `), inline elements keep their words in order, character references
//! are decoded, white space is collapsed as a browser renders it, `pre` is kept verbatim, and
//! images count by their alt text. Dropped with everything inside: `script`, `style`,
//! `template`, `noscript`, the `head` (`title` included), `svg`, `canvas`, `iframe`,
//! `object`, `embed`, `audio`, `video`, `map`, and the form controls `select`, `textarea`
//! and `button`.
//!
//! The main content only, by default, where the page marks it: its first `main` element (or
//! element with `role="main"`), else its `article` when it has exactly one; the whole body
//! when it marks none, when the marked part has no text, or on request.
//!
//! Structure levels: `h1` to `h6` start sections (levels 0 to 5, with their text as the
//! heading path); blocks outside list items, quotes and cells, and the items of top-level
//! lists, are level 6; every other block, item and table row is level 7.
//!
//! The tokenizer is not a tree builder: end tags that HTML implies (an open `p` before a
//! block, the open item, row or cell before the next) are inferred, and `script`, `style`,
//! `title`, `textarea` and the other raw-text elements switch its state by their names.
//!
//! Speed: `benches/NOTES.md`, under `rust/html/mod.rs`.

mod elements;
mod render;

use html5gum::emitters::callback::{CallbackEmitter, CallbackEvent};
use html5gum::{Emitter, ForwardingEmitter, Span, Tokenizer};

use crate::markdown::{count_header_chars, Outline, Table};
use render::Renderer;

/// Which part of a page is text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Content {
    /// The part the page marks as its main content, or the whole body when it marks none.
    #[default]
    Main,
    /// The whole body.
    Body,
}

impl Content {
    /// Its name in the settings: `"main"` or `"body"`.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Body => "body",
        }
    }

    /// The content named `name`, if it is one.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "main" => Some(Self::Main),
            "body" => Some(Self::Body),
            _ => None,
        }
    }
}

/// A page read for chunking: its readable text, the text's outline, and where each part
/// of the text came from in the page.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The readable text: what is cut, and what every chunk's offsets index.
    pub text: String,
    /// Its sections and cut positions, with the source map in [`Outline::source_map`].
    pub outline: Outline,
    /// The source byte ranges of its comments (where a converter marks its pages).
    pub comments: Vec<(usize, usize)>,
}

impl Page {
    /// Reads the HTML page `source` (its bytes, decoded).
    #[must_use]
    pub fn parse(source: &str, content: Content) -> Self {
        let mut renderer = Renderer::new(source);
        let mut comments = Vec::new();
        {
            let mut emitter = CallbackEmitter::new(
                |event: CallbackEvent<'_>, span: Span<usize>| -> Option<()> {
                    match event {
                        CallbackEvent::OpenStartTag { name } => {
                            renderer.open_start_tag(name, span.start);
                        }
                        CallbackEvent::AttributeName { name } => renderer.attribute_name(name),
                        CallbackEvent::AttributeValue { value } => renderer.attribute_value(value),
                        CallbackEvent::CloseStartTag { self_closing } => {
                            renderer.close_start_tag(self_closing, span.end);
                        }
                        CallbackEvent::EndTag { name } => renderer.end_tag(name, span.start),
                        CallbackEvent::String { value } => {
                            renderer.text(value, span.start, span.end);
                        }
                        CallbackEvent::Comment { .. } => comments.push((span.start, span.end)),
                        CallbackEvent::Doctype { .. } | CallbackEvent::Error(_) => {}
                    }
                    None
                },
            );
            emitter.naively_switch_states(true);
            for _ in Tokenizer::new_with_emitter(source, Quiet(emitter)) {}
        }
        let page = renderer.finish();
        let has_text = |&(start, end): &(usize, usize)| {
            page.text[start..end]
                .bytes()
                .any(|byte| !byte.is_ascii_whitespace())
        };
        let whole = (0, page.text.len());
        let marked = match content {
            Content::Body => None,
            Content::Main => page.main.or(page.article.filter(|_| page.articles == 1)),
        };
        let (mut start, mut end) = marked.filter(has_text).unwrap_or(whole);
        let part = &page.text[start..end];
        let lead = part.len() - part.trim_start().len();
        if lead == part.len() {
            end = start;
        } else {
            start += lead;
            end -= part.len() - part.trim_end().len();
        }
        let within = |position: &usize| (start..end).contains(position);
        let mut outline = Outline {
            headings: page
                .headings
                .into_iter()
                .filter(|heading| within(&heading.start))
                .map(|mut heading| {
                    heading.start -= start;
                    heading.lead_end = heading.lead_end.clamp(heading.start + start, end) - start;
                    heading
                })
                .collect(),
            source_map: Some(page.map.slice(start, end)),
            tables: page
                .tables
                .iter()
                .filter(|table| within(&table.start) && table.end <= end)
                .map(|table| Table {
                    start: table.start - start,
                    end: table.end - start,
                    header: table.header.map(|(from, to)| (from - start, to - start)),
                    header_chars: None,
                })
                .collect(),
            ..Outline::default()
        };
        for (level, positions) in page.boundaries.iter().enumerate() {
            outline.boundaries[level] = positions
                .iter()
                .filter(|position| within(position))
                .map(|&position| position - start)
                .collect();
        }
        outline.link();
        let text = page.text[start..end].to_owned();
        count_header_chars(&text, &mut outline.tables);
        Self {
            text,
            outline,
            comments,
        }
    }

    /// The source byte range of the text bytes `start..end`.
    #[must_use]
    pub fn source_span(&self, start: usize, end: usize) -> (usize, usize) {
        self.outline
            .source_map
            .as_ref()
            .map_or((0, 0), |map| map.source_span(start, end))
    }
}

/// An emitter that asks for no parse errors: the tokenizer then skips checking every byte
/// for them (a fifth of its time on the Rust documentation), which a reader of text never
/// needs.
struct Quiet<E>(E);

impl<E: Emitter> ForwardingEmitter for Quiet<E> {
    type Token = E::Token;

    fn inner(&mut self) -> &mut impl Emitter<Token = Self::Token> {
        &mut self.0
    }

    fn should_emit_errors(&mut self) -> bool {
        false
    }
}

/// How many tokenizer events `source` makes, with nothing done for each: the tokenizer's own
/// cost, the bound of reading a page (`benches/html_tree.py`).
#[must_use]
pub fn count_events(source: &str) -> usize {
    let mut events = 0_usize;
    {
        let mut emitter = CallbackEmitter::new(
            |_event: CallbackEvent<'_>, _span: Span<usize>| -> Option<()> {
                events += 1;
                None
            },
        );
        emitter.naively_switch_states(true);
        for _ in Tokenizer::new_with_emitter(source, Quiet(emitter)) {}
    }
    events
}

/// Whether `path` names an HTML file by its ending (`.html`, `.htm`, `.xhtml`, any case).
#[must_use]
pub fn is_html_path(path: &str) -> bool {
    let Some((_, ending)) = path.rsplit_once('.') else {
        return false;
    };
    ["html", "htm", "xhtml"]
        .iter()
        .any(|known| ending.eq_ignore_ascii_case(known))
}

#[cfg(test)]
mod tests;
