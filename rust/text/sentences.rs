//! Sentences, words, passages and pages of a text, as the units of Haystack's `split_by` count
//! them, with no settings: the sizers of `sizing/segments.rs` and the sentence separator level
//! (`search.rs`) are built on these, so the size of a piece and the boundaries cut at agree.
//!
//! - A *word* is a maximal run of non-whitespace characters (whitespace as Python's
//!   `str.isspace` sees it): `str.split()` with no argument.
//! - A *sentence* is a UAX #29 sentence (`unicode-segmentation`) that holds a non-whitespace
//!   character, found with each lone line break read as a space. UAX #29 ends a sentence at
//!   every line break, so hard-wrapped prose (a Gutenberg book: a line break every 70 chars)
//!   would count one sentence per line; a line break next to a blank line (a paragraph end)
//!   still ends its sentence. Reading the break as a space keeps byte offsets unchanged.
//! - A *passage* is a non-blank piece between blank lines ("\n\n" or "\r\n\r\n", as the
//!   default separators' first level finds them, leftmost first).
//! - A *page* is a non-blank piece between form feeds ("\f").
//!
//! Performance notes: the segmenter runs on the text itself when it holds no line break, and
//! otherwise on a copy (kept per thread, so no allocation per count) in which lone breaks
//! are spaces; words are counted over bytes, non-ASCII whitespace matched by its UTF-8 bytes.

use std::cell::RefCell;

use unicode_segmentation::UnicodeSegmentation;

use super::chars::{space_after, trimmed};

/// How a separator level says "cut at sentence boundaries" (`spanchunk.SENTENCES` in Python):
/// a noncharacter (never interchanged as text) and a name, so no literal separator a user
/// writes can be taken for it.
pub const SENTENCES: &str = "\u{fdd0}sentences";

/// Sentence-end literals that stand for a sentence level among the separators an overlap may
/// start after (the overlap search looks for literals only): the terminators of the default
/// separators, and line breaks.
pub const SENTENCE_ENDS: [&str; 8] = [". ", "! ", "? ", "。", "！", "？", "\n", "\r\n"];

thread_local! {
    static READ_AS_SPACES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Calls `each(start, end)` for every UAX #29 sentence of `text`, in order, every byte in one
/// (lone line breaks read as spaces, see the module notes).
pub fn for_each_sentence(text: &str, mut each: impl FnMut(usize, usize)) {
    if memchr::memchr2(b'\n', b'\r', text.as_bytes()).is_none() {
        for (start, sentence) in text.split_sentence_bound_indices() {
            each(start, start + sentence.len());
        }
        return;
    }
    READ_AS_SPACES.with(|buffer| {
        // A reentrant call (none today) gets its own buffer instead of a borrow panic.
        let mut own = Vec::new();
        let mut borrowed = buffer.try_borrow_mut();
        let copy = match borrowed.as_deref_mut() {
            Ok(shared) => shared,
            Err(_) => &mut own,
        };
        lone_breaks_as_spaces(text, copy);
        // Only ASCII bytes were replaced, by ASCII: still UTF-8.
        let normalised = std::str::from_utf8(copy).unwrap_or(text);
        for (start, sentence) in normalised.split_sentence_bound_indices() {
            each(start, start + sentence.len());
        }
    });
}

/// `text` into `out`, with every line break ("\n", "\r\n", "\r") that neither follows nor
/// precedes another line break (across spaces and tabs only) replaced by spaces.
fn lone_breaks_as_spaces(text: &str, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    out.clear();
    out.extend_from_slice(bytes);
    let is_break = |byte: u8| byte == b'\n' || byte == b'\r';
    let is_blank = |byte: u8| byte == b' ' || byte == b'\t';
    let mut at = 0;
    while let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
        let start = at + found;
        let end = if bytes[start] == b'\r' && bytes.get(start + 1) == Some(&b'\n') {
            start + 2
        } else {
            start + 1
        };
        let mut before = start;
        while before > 0 && is_blank(bytes[before - 1]) {
            before -= 1;
        }
        let mut after = end;
        while after < bytes.len() && is_blank(bytes[after]) {
            after += 1;
        }
        let follows_break = before > 0 && is_break(bytes[before - 1]);
        let precedes_break = after < bytes.len() && is_break(bytes[after]);
        if !follows_break && !precedes_break {
            out[start..end].fill(b' ');
        }
        at = end;
    }
}

/// Number of sentences of `text` that hold a non-whitespace character.
#[must_use]
pub fn count_sentences(text: &str) -> usize {
    let mut count = 0;
    for_each_sentence(text, |start, end| {
        let (content_start, content_end) = trimmed(text, start, end);
        count += usize::from(content_start < content_end);
    });
    count
}

/// Calls `found(start, end)` for the whitespace between each two consecutive sentences of
/// `text` that hold a non-whitespace character (empty where one sentence ends right where the
/// next begins, as in "好。好"), in order; true when there was any. Blank sentences join the
/// whitespace around them.
///
/// # Errors
/// The first error `found` returns.
pub fn for_each_sentence_boundary<E>(
    text: &str,
    mut found: impl FnMut(usize, usize) -> Result<(), E>,
) -> Result<bool, E> {
    // The whitespace after the last sentence with content, grown over blank sentences.
    let mut pending: Option<(usize, usize)> = None;
    let mut any = false;
    let mut result = Ok(());
    for_each_sentence(text, |start, end| {
        if result.is_err() {
            return;
        }
        let (content_start, content_end) = trimmed(text, start, end);
        if content_start == content_end {
            if let Some((_, pending_end)) = pending.as_mut() {
                *pending_end = end;
            }
            return;
        }
        if let Some((gap_start, gap_end)) = pending.take() {
            any = true;
            // Leading whitespace of this sentence (after a paragraph break) joins the gap.
            result = found(gap_start, gap_end.max(content_start));
        }
        pending = Some((content_end, end));
    });
    result.map(|()| any)
}

/// Number of words of `text`: maximal runs of non-whitespace characters.
#[must_use]
pub fn count_words(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut in_word = false;
    let mut at = 0;
    while at < bytes.len() {
        let space = space_after(bytes, at);
        if space > 0 {
            in_word = false;
            at += space;
        } else {
            // A continuation byte never matches a space's lead byte: it stays in its word.
            count += usize::from(!in_word);
            in_word = true;
            at += 1;
        }
    }
    count
}

/// Number of non-blank pieces of `text` between matches of `separator` (one of the
/// `separators` at each cut, leftmost first, each found by its first byte `lead`).
fn count_pieces(text: &str, lead: u8, separators: &[&[u8]]) -> usize {
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut piece_start = 0;
    let mut at = 0;
    let mut close = |piece_start: usize, piece_end: usize| {
        let (start, end) = trimmed(text, piece_start, piece_end);
        count += usize::from(start < end);
    };
    while let Some(found) = memchr::memchr(lead, &bytes[at..]) {
        let position = at + found;
        match separators
            .iter()
            .find(|separator| bytes[position..].starts_with(separator))
        {
            Some(separator) => {
                close(piece_start, position);
                piece_start = position + separator.len();
                at = piece_start;
            }
            None => at = position + 1,
        }
    }
    close(piece_start, bytes.len());
    count
}

/// Number of passages of `text`: non-blank pieces between "\n\n" or "\r\n\r\n".
#[must_use]
pub fn count_passages(text: &str) -> usize {
    // The two patterns start with different bytes and neither holds the other: each line
    // break is tried as the start of "\n\n", each carriage return as the start of
    // "\r\n\r\n"; a "\n" inside a "\r\n\r\n" never starts "\n\n".
    let bytes = text.as_bytes();
    let mut count = 0;
    let mut piece_start = 0;
    let mut at = 0;
    while let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[at..]) {
        let position = at + found;
        let width = if bytes[position..].starts_with(b"\n\n") {
            2
        } else if bytes[position..].starts_with(b"\r\n\r\n") {
            4
        } else {
            0
        };
        if width == 0 {
            at = position + 1;
            continue;
        }
        let (start, end) = trimmed(text, piece_start, position);
        count += usize::from(start < end);
        piece_start = position + width;
        at = piece_start;
    }
    let (start, end) = trimmed(text, piece_start, bytes.len());
    count + usize::from(start < end)
}

/// Number of pages of `text`: non-blank pieces between form feeds.
#[must_use]
pub fn count_pages(text: &str) -> usize {
    count_pieces(text, b'\x0c', &[b"\x0c"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sentences(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_sentence(text, |start, end| out.push(&text[start..end]));
        out
    }

    fn boundaries(text: &str) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let any = for_each_sentence_boundary(text, |start, end| {
            out.push((start, end));
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(any, !out.is_empty());
        out
    }

    #[test]
    fn words_are_runs_of_non_whitespace() {
        assert_eq!(count_words(""), 0);
        assert_eq!(count_words(" \n\t\u{3000} "), 0);
        assert_eq!(count_words("one"), 1);
        assert_eq!(count_words("  one  two\nthree\u{a0}four\u{3000}five "), 5);
        assert_eq!(count_words("Hello, world!"), 2);
        assert_eq!(count_words("日本語のテキスト 😀é\u{301}"), 2);
        assert_eq!(
            count_words("a\u{1c}b"),
            2,
            "information separators are whitespace"
        );
    }

    #[test]
    fn sentences_read_lone_line_breaks_as_spaces() {
        let text = "It was a dark\nnight. The wind\r\nhowled.\n\nNobody came.";
        assert_eq!(
            sentences(text),
            [
                "It was a dark\nnight. ",
                "The wind\r\nhowled.\n",
                "\n",
                "Nobody came."
            ]
        );
        assert_eq!(count_sentences(text), 3);
        assert_eq!(
            count_sentences("A line\n   \nanother"),
            2,
            "a blank line ends a sentence"
        );
        assert_eq!(count_sentences(""), 0);
        assert_eq!(count_sentences(" \n\n \t"), 0);
        assert_eq!(count_sentences("你好。世界！"), 2);
        assert_eq!(
            count_sentences("Mr. Smith went home. He slept."),
            3,
            "UAX #29 has no abbreviations"
        );
        assert_eq!(count_sentences("half a sente"), 1);
    }

    #[test]
    fn sentence_boundaries_are_the_whitespace_between() {
        let text = "One. Two?  \n\n Three";
        assert_eq!(boundaries(text), [(4, 5), (9, 14)]);
        assert_eq!(&text[9..14], "  \n\n ");
        assert_eq!(boundaries("你好。世界！"), [(9, 9)]);
        assert!(boundaries("no end").is_empty());
        assert!(boundaries("  Lead. ").is_empty());
    }

    #[test]
    fn passages_and_pages() {
        assert_eq!(count_passages(""), 0);
        assert_eq!(count_passages("a"), 1);
        assert_eq!(count_passages("a\nb"), 1);
        assert_eq!(count_passages("a\n\nb\r\n\r\nc\n\n\n\nd"), 4);
        assert_eq!(count_passages("\n\n a \n\n \n\n"), 1);
        assert_eq!(
            count_passages("a\n \nb"),
            1,
            "only two line breaks in a row separate"
        );
        assert_eq!(count_pages("one\x0ctwo\x0c\x0c three \x0c"), 3);
        assert_eq!(count_pages(" \x0c "), 0);
    }
}
