//! The settings of one level, as the Python API spells them.

use crate::code::{self, Language};
use crate::error::ChunkError;
use crate::html::Content;
use crate::markdown::Outline;
use crate::text::pages::PagePattern;
use crate::text::sentences::SENTENCES;

/// Where a separator goes when text is cut at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeepSeparator {
    /// The separator ends the piece before it (the default).
    End,
    /// The separator starts the piece after it.
    Start,
    /// The separator's trailing whitespace never stands at a chunk edge; its other characters
    /// stay with the piece before it, so nothing but whitespace is ever dropped.
    None,
}

impl KeepSeparator {
    /// Parses the Python spelling ("end", "start", "none").
    ///
    /// # Errors
    /// Any other value, with the choices.
    pub fn parse(name: &str) -> Result<Self, ChunkError> {
        match name {
            "end" => Ok(Self::End),
            "start" => Ok(Self::Start),
            "none" => Ok(Self::None),
            other => Err(ChunkError::setting(
                "keep_separator",
                format!("unknown value {other:?}: use \"end\", \"start\" or \"none\""),
            )),
        }
    }

    /// The Python spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::End => "end",
            Self::Start => "start",
            Self::None => "none",
        }
    }
}

/// The document structure a splitter cuts at before its literal separators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Structure {
    /// None: the separators only.
    #[default]
    Plain,
    /// Markdown (CommonMark): sections, then blocks, then the separators; see `markdown/`.
    Markdown,
    /// Source code: definitions, then statements, then the separators; see `code/`. The
    /// language, or `None` for each document's own, by the ending of its source's name.
    Code(Option<Language>),
    /// An HTML page's readable text: sections by its headings, then blocks and rows, then
    /// the separators; see `html/`. The outline comes with the page (`html::Page`), made
    /// from its source: every document given to such a splitter is a page's source, read
    /// into its readable text first (`engine::chunked_documents`, the job's batches), with
    /// the part of the page that is text.
    Html(Content),
}

impl Structure {
    /// Parses the Python spelling (None or "text" for plain, "markdown", "code"), with the
    /// language of "code" (None: each document's, from its source).
    ///
    /// # Errors
    /// Any other value, with the choices; a language with another structure, or an unknown
    /// one.
    pub fn parse(name: Option<&str>, language: Option<&str>) -> Result<Self, ChunkError> {
        let structure = match name {
            None | Some("text") => Self::Plain,
            Some("markdown") => Self::Markdown,
            Some("code") => Self::Code(None),
            Some("html") => Self::Html(Content::Main),
            Some(other) => {
                return Err(ChunkError::setting(
                    "structure",
                    format!(
                    "unknown structure {other:?}: use None (plain text), \"markdown\", \"code\" or \"html\""
                ),
                ))
            }
        };
        match (structure, language) {
            (_, None) => Ok(structure),
            (Self::Code(_), Some(language)) => match Language::named(language) {
                Some(known) => Ok(Self::Code(Some(known))),
                None => Err(ChunkError::setting(
                    "language",
                    format!(
                        "unknown language {language:?}: use one of {}",
                        Language::names().join(", ")
                    ),
                )),
            },
            (_, Some(_)) => Err(ChunkError::setting(
                "language",
                "a language applies to code only: pass structure=\"code\" or drop it",
            )),
        }
    }

    /// The Python spelling (None for plain text).
    #[must_use]
    pub fn name(self) -> Option<&'static str> {
        match self {
            Self::Plain => None,
            Self::Markdown => Some("markdown"),
            Self::Code(_) => Some("code"),
            Self::Html(_) => Some("html"),
        }
    }

    /// This structure with the part of a page that is text (`"main"` or `"body"`; None keeps
    /// the default).
    ///
    /// # Errors
    /// Another value, or one given to a structure that is not HTML.
    pub fn with_html_content(self, content: Option<&str>) -> Result<Self, ChunkError> {
        match (self, content) {
            (_, None) => Ok(self),
            (Self::Html(_), Some(name)) => Content::parse(name).map(Self::Html).ok_or_else(|| {
                ChunkError::setting(
                    "content",
                    format!("unknown content {name:?}: use \"main\" or \"body\""),
                )
            }),
            (_, Some(_)) => Err(ChunkError::setting(
                "content",
                "content applies to HTML only: pass structure=\"html\" or drop it",
            )),
        }
    }

    /// The part of a page that is text, for an HTML structure (None for any other).
    #[must_use]
    pub fn html_content(self) -> Option<Content> {
        match self {
            Self::Html(content) => Some(content),
            _ => None,
        }
    }

    /// The language of code given in the settings (None: each document's, or not code).
    #[must_use]
    pub fn language(self) -> Option<&'static str> {
        match self {
            Self::Code(language) => language.map(Language::name),
            _ => None,
        }
    }

    /// The outline of `text` (with `source`, its file name or source, where the language
    /// comes from that) that a splitter of this structure cuts at: `None` for plain text,
    /// and for code of no known language (cut as plain text).
    #[must_use]
    pub fn outline(self, text: &str, source: Option<&str>) -> Option<Outline> {
        match self {
            Self::Plain | Self::Html(_) => None,
            Self::Markdown => Some(Outline::parse(text)),
            Self::Code(language) => language
                .or_else(|| source.and_then(Language::of_path))
                .map(|language| code::outline(text, language)),
        }
    }

    /// Whether `outline` is what a splitter of this structure cuts at (a tree whose levels
    /// hold two structures cuts each level by its own, the other ones by their separators).
    #[must_use]
    pub fn reads(self, outline: &Outline) -> bool {
        match self {
            Self::Plain => false,
            Self::Markdown | Self::Html(_) => !outline.is_code(),
            Self::Code(None) => outline.is_code(),
            Self::Code(Some(language)) => outline.language == Some(language.name()),
        }
    }
}

/// How pieces are merged into a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Merge {
    /// From a chunk's start, the coarsest separator level whose next piece fits decides: the
    /// chunk takes whole pieces of that level while they fit, and ends there (the default).
    /// A finer level is used only inside a piece that alone exceeds the size.
    #[default]
    Boundary,
    /// The chunk takes pieces of any level while they fit: fuller chunks, fewer of them, but
    /// a chunk may end inside a sentence when a whole one would have ended it earlier.
    Greedy,
}

impl Merge {
    /// Parses the Python spelling ("boundary", "greedy").
    ///
    /// # Errors
    /// Any other value, with the choices.
    pub fn parse(name: &str) -> Result<Self, ChunkError> {
        match name {
            "boundary" => Ok(Self::Boundary),
            "greedy" => Ok(Self::Greedy),
            other => Err(ChunkError::setting(
                "merge",
                format!("unknown value {other:?}: use \"boundary\" or \"greedy\""),
            )),
        }
    }

    /// The Python spelling.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Boundary => "boundary",
            Self::Greedy => "greedy",
        }
    }
}

/// The settings of one level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitterConfig {
    /// Largest chunk, in the sizer's unit.
    pub chunk_size: usize,
    /// Largest overlap with the previous chunk, in the sizer's unit.
    pub overlap: usize,
    /// Pieces smaller than this join a neighbour when the result still fits.
    pub min_chunk_size: usize,
    /// Separator levels, coarsest first; each level holds alternatives.
    pub separators: Vec<Vec<String>>,
    /// Where separators go.
    pub keep_separator: KeepSeparator,
    /// Strip whitespace from chunk edges.
    pub trim: bool,
    /// Document structure cut at before the separators.
    pub structure: Structure,
    /// How pieces are merged into a chunk.
    pub merge: Merge,
    /// The page markers of a document cut by this level (the top level's, in a tree), or
    /// None: no pages. Pages change no cut; every chunk of a document with markers says the
    /// pages it spans.
    pub pages: Option<PagePattern>,
}

impl SplitterConfig {
    /// Settings with the default separators and no overlap.
    #[must_use]
    pub fn new(chunk_size: usize) -> Self {
        Self {
            chunk_size,
            overlap: 0,
            min_chunk_size: 0,
            separators: default_separators(),
            keep_separator: KeepSeparator::End,
            trim: true,
            structure: Structure::Plain,
            merge: Merge::Boundary,
            pages: None,
        }
    }
}

/// The default separator levels, coarsest first: blank lines, line breaks, sentence ends,
/// clause marks, spaces. Graphemes and code points always follow as fallbacks.
#[must_use]
pub fn default_separators() -> Vec<Vec<String>> {
    let levels: [&[&str]; 5] = [
        &["\n\n", "\r\n\r\n"],
        &["\r\n", "\n"],
        &[". ", "! ", "? ", "。", "！", "？"],
        &["; ", ", ", "，", "、", "；"],
        &[" ", "\t", "\u{3000}"],
    ];
    levels
        .iter()
        .map(|level| level.iter().map(|sep| (*sep).to_owned()).collect())
        .collect()
}

/// The default separator levels of a unit, coarsest first: [`default_separators`], except
/// that sentences cut at UAX #29 sentence boundaries ([`SENTENCES`], before line breaks, which
/// hard-wrapped prose puts inside sentences) and pages at form feeds first.
#[must_use]
pub fn default_separators_for(unit: &str) -> Vec<Vec<String>> {
    let mut levels = default_separators();
    match unit {
        "sentence" => {
            // Blank lines, sentences, line breaks, clause marks, spaces.
            levels[2] = vec![SENTENCES.to_owned()];
            levels.swap(1, 2);
        }
        "page" => levels.insert(0, vec!["\x0c".to_owned()]),
        _ => {}
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_per_unit() {
        assert_eq!(default_separators_for("char"), default_separators());
        assert_eq!(default_separators_for("word"), default_separators());
        assert_eq!(default_separators_for("passage"), default_separators());
        let sentence = default_separators_for("sentence");
        assert_eq!(sentence[1], [SENTENCES]);
        assert_eq!(sentence[2], ["\r\n", "\n"]);
        assert_eq!(sentence.len(), default_separators().len());
        assert_eq!(default_separators_for("page")[0], ["\x0c"]);
    }
}
