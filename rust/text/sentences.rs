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
//! Speed: `benches/NOTES.md`, under `rust/text/sentences.rs`.
//!
//! Words are counted eight bytes at a time (SWAR) up to the lead byte of a non-ASCII blank
//! char, and looked up in a per-text index while a text is chunked (`sizing/word_index.rs`).

use std::cell::RefCell;

use unicode_segmentation::UnicodeSegmentation;

use super::chars::{is_ascii_space, space_after, trimmed, whitespace_after};

/// How a separator level says "cut at sentence boundaries" (`spanchunk.SENTENCES` in Python):
/// a noncharacter (never interchanged as text) and a name, so no literal separator a user
/// writes can be taken for it.
pub const SENTENCES: &str = "\u{fdd0}sentences";

/// Sentence-end literals that stand for a sentence level among the separators an overlap may
/// start after (the overlap search looks for literals only): the terminators of the default
/// separators, and line breaks.
pub const SENTENCE_ENDS: [&str; 8] = [". ", "! ", "? ", "。", "！", "？", "\n", "\r\n"];

thread_local! {
    static READ_AS_SPACES: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Calls `each(start, end)` for every UAX #29 sentence of `text`, in order, every byte in one
/// (lone line breaks read as spaces, see the module notes).
pub fn for_each_sentence(text: &str, mut each: impl FnMut(usize, usize)) {
    try_for_each_sentence(text, |start, end| {
        each(start, end);
        true
    });
}

/// [`for_each_sentence`] until `each` returns false.
fn try_for_each_sentence(text: &str, mut each: impl FnMut(usize, usize) -> bool) {
    let mut start = 0;
    let mut going = true;
    for_each_bound(text, |bound| {
        going = each(start, bound);
        start = bound;
        going
    });
    if going && start < text.len() {
        each(start, text.len());
    }
}

/// Calls `found` with every sentence boundary strictly inside `text`, in order, until it
/// returns false; lone line breaks are read as spaces (see [`is_lone_break`]).
///
/// UAX #29 ends sentences only after a terminator (`STerm`, `ATerm`) or a paragraph
/// separator (rules SB4, SB11): elsewhere nothing is segmented. Around each such char, the
/// segmenter runs on a window that starts at the last letter or digit before it (no rule
/// looks back across one: the look-backs go through `Close*` and `Sp*` to a terminator, and
/// from an `ATerm` to the char before it, both inside the window) and ends right after the
/// first letter past it (which ends SB8's look-ahead, and after which no sentence ends);
/// overlapping windows merge. A window that holds a line break is segmented in a copy with
/// its lone breaks as spaces. `whole_text_agrees` in the tests checks this against the
/// segmenter on the whole text (rewritten whole).
///
/// Nothing is read past the last boundary asked for, so a count that stops early (a piece
/// that is too big, see `count_sentences_up_to`) costs what it counts.
fn for_each_bound(text: &str, mut found: impl FnMut(usize) -> bool) {
    let bytes = text.as_bytes();
    let mut window: Option<(usize, usize)> = None;
    // No window starts before this: a boundary found without the segmenter.
    let mut floor = 0;
    let mut at = 0;
    let segment = |(start, end): (usize, usize), found: &mut dyn FnMut(usize) -> bool| {
        let part = &text[start..end];
        if memchr::memchr2(b'\n', b'\r', part.as_bytes()).is_none() {
            return part
                .split_sentence_bound_indices()
                .skip(1)
                .all(|(offset, _)| found(start + offset));
        }
        READ_AS_SPACES.with(|buffer| {
            // A reentrant call (none today) gets its own buffer instead of a borrow panic.
            let mut own = String::new();
            let mut borrowed = buffer.try_borrow_mut();
            let copy = match borrowed.as_deref_mut() {
                Ok(shared) => shared,
                Err(_) => &mut own,
            };
            lone_breaks_as_spaces(text, (start, end), copy);
            copy.split_sentence_bound_indices()
                .skip(1)
                .all(|(offset, _)| found(start + offset))
        })
    };
    while let Some((candidate, width)) = next_candidate(text, at) {
        at = candidate + width;
        if matches!(bytes[candidate], b'\n' | b'\r') && is_lone_break(bytes, candidate) {
            continue;
        }
        if at < text.len()
            && window.is_none_or(|(_, end)| candidate >= end)
            && ends_for_sure(text, candidate, at)
        {
            // Found without the segmenter; the window before it, if any, comes first.
            if let Some(last) = window.take() {
                if !segment(last, &mut found) {
                    return;
                }
            }
            if !found(at) {
                return;
            }
            floor = at;
            continue;
        }
        let end = window_end(text, at);
        window = match window {
            Some((start, window_end)) if candidate < window_end => Some((start, end)),
            Some((start, window_end)) => match safe_start(text, candidate, window_end) {
                Some(new_start) => {
                    if !segment((start, window_end), &mut found) {
                        return;
                    }
                    Some((new_start, end))
                }
                None => Some((start, end)),
            },
            None => Some((safe_start(text, candidate, floor).unwrap_or(floor), end)),
        };
    }
    if let Some(last) = window {
        segment(last, &mut found);
    }
}

/// Whether a sentence ends right after the char `text[candidate..after]`, whatever comes
/// before it (`after` is inside the text), in two cases that need no segmenter:
/// - a line feed, or a carriage return before anything but a line feed: a paragraph
///   separator ends its sentence (SB4; SB3 keeps "\r\n" whole), and no rule looks back
///   across one;
/// - an ideographic full stop, or a full-width exclamation or question mark (all `STerm`),
///   right before a CJK letter (`OLetter`, see [`is_cjk_letter`]): SB11 ends the sentence,
///   and no rule that keeps one going looks further back than the terminator.
///
/// Chinese and Japanese sentences end so, and Markdown paragraphs: the segmenter's windows
/// around them were a third of the time of chunking Chinese in sentences.
fn ends_for_sure(text: &str, candidate: usize, after: usize) -> bool {
    let bytes = text.as_bytes();
    match &bytes[candidate..after] {
        [b'\n'] => true,
        [b'\r'] => bytes[after] != b'\n',
        [0xe3, 0x80, 0x82] | [0xef, 0xbc, 0x81 | 0x9f] => {
            text[after..].chars().next().is_some_and(is_cjk_letter)
        }
        _ => false,
    }
}

/// The non-ASCII chars after which a UAX #29 sentence may end: `STerm`, `ATerm` and `Sep`
/// (Unicode 16, the tables of `unicode-segmentation`).
const TERMINATORS: &[(char, char)] = &[
    ('\u{85}', '\u{85}'),
    ('\u{589}', '\u{589}'),
    ('\u{61d}', '\u{61f}'),
    ('\u{6d4}', '\u{6d4}'),
    ('\u{700}', '\u{702}'),
    ('\u{7f9}', '\u{7f9}'),
    ('\u{837}', '\u{837}'),
    ('\u{839}', '\u{839}'),
    ('\u{83d}', '\u{83e}'),
    ('\u{964}', '\u{965}'),
    ('\u{104a}', '\u{104b}'),
    ('\u{1362}', '\u{1362}'),
    ('\u{1367}', '\u{1368}'),
    ('\u{166e}', '\u{166e}'),
    ('\u{1735}', '\u{1736}'),
    ('\u{17d4}', '\u{17d5}'),
    ('\u{1803}', '\u{1803}'),
    ('\u{1809}', '\u{1809}'),
    ('\u{1944}', '\u{1945}'),
    ('\u{1aa8}', '\u{1aab}'),
    ('\u{1b4e}', '\u{1b4f}'),
    ('\u{1b5a}', '\u{1b5b}'),
    ('\u{1b5e}', '\u{1b5f}'),
    ('\u{1b7d}', '\u{1b7f}'),
    ('\u{1c3b}', '\u{1c3c}'),
    ('\u{1c7e}', '\u{1c7f}'),
    ('\u{2024}', '\u{2024}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{203c}', '\u{203d}'),
    ('\u{2047}', '\u{2049}'),
    ('\u{2cf9}', '\u{2cfb}'),
    ('\u{2e2e}', '\u{2e2e}'),
    ('\u{2e3c}', '\u{2e3c}'),
    ('\u{2e53}', '\u{2e54}'),
    ('\u{3002}', '\u{3002}'),
    ('\u{a4ff}', '\u{a4ff}'),
    ('\u{a60e}', '\u{a60f}'),
    ('\u{a6f3}', '\u{a6f3}'),
    ('\u{a6f7}', '\u{a6f7}'),
    ('\u{a876}', '\u{a877}'),
    ('\u{a8ce}', '\u{a8cf}'),
    ('\u{a92f}', '\u{a92f}'),
    ('\u{a9c8}', '\u{a9c9}'),
    ('\u{aa5d}', '\u{aa5f}'),
    ('\u{aaf0}', '\u{aaf1}'),
    ('\u{abeb}', '\u{abeb}'),
    ('\u{fe12}', '\u{fe12}'),
    ('\u{fe15}', '\u{fe16}'),
    ('\u{fe52}', '\u{fe52}'),
    ('\u{fe56}', '\u{fe57}'),
    ('\u{ff01}', '\u{ff01}'),
    ('\u{ff0e}', '\u{ff0e}'),
    ('\u{ff1f}', '\u{ff1f}'),
    ('\u{ff61}', '\u{ff61}'),
    ('\u{10a56}', '\u{10a57}'),
    ('\u{10f55}', '\u{10f59}'),
    ('\u{10f86}', '\u{10f89}'),
    ('\u{11047}', '\u{11048}'),
    ('\u{110be}', '\u{110c1}'),
    ('\u{11141}', '\u{11143}'),
    ('\u{111c5}', '\u{111c6}'),
    ('\u{111cd}', '\u{111cd}'),
    ('\u{111de}', '\u{111df}'),
    ('\u{11238}', '\u{11239}'),
    ('\u{1123b}', '\u{1123c}'),
    ('\u{112a9}', '\u{112a9}'),
    ('\u{113d4}', '\u{113d5}'),
    ('\u{1144b}', '\u{1144c}'),
    ('\u{115c2}', '\u{115c3}'),
    ('\u{115c9}', '\u{115d7}'),
    ('\u{11641}', '\u{11642}'),
    ('\u{1173c}', '\u{1173e}'),
    ('\u{11944}', '\u{11944}'),
    ('\u{11946}', '\u{11946}'),
    ('\u{11a42}', '\u{11a43}'),
    ('\u{11a9b}', '\u{11a9c}'),
    ('\u{11c41}', '\u{11c42}'),
    ('\u{11ef7}', '\u{11ef8}'),
    ('\u{11f43}', '\u{11f44}'),
    ('\u{16a6e}', '\u{16a6f}'),
    ('\u{16af5}', '\u{16af5}'),
    ('\u{16b37}', '\u{16b38}'),
    ('\u{16b44}', '\u{16b44}'),
    ('\u{16d6e}', '\u{16d6f}'),
    ('\u{16e98}', '\u{16e98}'),
    ('\u{1bc9f}', '\u{1bc9f}'),
    ('\u{1da88}', '\u{1da88}'),
];

/// Per byte, as the first byte of a char: 1 an ASCII char after which a sentence may end
/// (`.`, `!`, `?`, line breaks), 2 the lead byte of some char of [`TERMINATORS`], to be
/// looked up, 0 neither (every continuation byte, and the lead bytes of CJK ideographs, so
/// Chinese text is skipped a byte at a time with one look-up: decoding and searching the
/// table for every char was 30% of the time of chunking Chinese in sentences).
const CANDIDATE_BYTES: [u8; 256] = {
    const fn lead(character: char) -> usize {
        let code = character as u32;
        (if code < 0x80 {
            code
        } else if code < 0x800 {
            0xc0 | code >> 6
        } else if code < 0x1_0000 {
            0xe0 | code >> 12
        } else {
            0xf0 | code >> 18
        }) as usize
    }
    let mut table = [0; 256];
    let mut row = 0;
    while row < TERMINATORS.len() {
        let (low, high) = TERMINATORS[row];
        let mut byte = lead(low);
        while byte <= lead(high) {
            table[byte] = 2;
            byte += 1;
        }
        row += 1;
    }
    table[b'.' as usize] = 1;
    table[b'!' as usize] = 1;
    table[b'?' as usize] = 1;
    table[b'\n' as usize] = 1;
    table[b'\r' as usize] = 1;
    table
};

/// The next char at or after `at` after which a sentence may end, with its width.
fn next_candidate(text: &str, at: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut position = at;
    loop {
        // Eight bytes at a time while none may start a candidate: eight look-ups and no
        // branch between them.
        while let Some(block) = bytes.get(position..position + 8) {
            let any = block
                .iter()
                .fold(0, |any, &byte| any | CANDIDATE_BYTES[usize::from(byte)]);
            if any != 0 {
                break;
            }
            position += 8;
        }
        if position >= bytes.len() {
            return None;
        }
        let stop = (position + 8).min(bytes.len());
        if let Some(found) = candidate_before(text, &mut position, stop) {
            return Some(found);
        }
    }
}

/// The first candidate of [`next_candidate`] that starts in `*position..stop`, moving
/// `*position` past the chars looked at.
#[inline]
fn candidate_before(text: &str, position: &mut usize, stop: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    while *position < stop {
        let at = *position;
        match CANDIDATE_BYTES[usize::from(bytes[at])] {
            0 => *position += 1,
            1 => return Some((at, 1)),
            _ => {
                let character = text[at..].chars().next()?;
                let width = character.len_utf8();
                let table = TERMINATORS.binary_search_by(|&(low, high)| {
                    if high < character {
                        std::cmp::Ordering::Less
                    } else if low > character {
                        std::cmp::Ordering::Greater
                    } else {
                        std::cmp::Ordering::Equal
                    }
                });
                if table.is_ok() {
                    return Some((at, width));
                }
                *position += width;
            }
        }
    }
    None
}

/// Whether `character` is a letter or digit of a script that fills most text (ASCII, CJK
/// ideographs, kana, Hangul syllables): sentence class `Upper`, `Lower`, `Numeric` or
/// `OLetter`, never `Sp`, `Close`, a terminator, `Extend` or `Format`.
fn is_anchor(character: char) -> bool {
    character.is_ascii_alphanumeric() || is_cjk_letter(character)
}

/// CJK letters, all of sentence class `OLetter` (checked against the tables of
/// `unicode-segmentation`).
fn is_cjk_letter(character: char) -> bool {
    matches!(
        character,
        '\u{3041}'..='\u{3096}'
            | '\u{30a1}'..='\u{30fa}'
            | '\u{3400}'..='\u{4dbf}'
            | '\u{4e00}'..='\u{9fff}'
            | '\u{ac00}'..='\u{d7a3}'
    )
}

/// Just after the first letter (ASCII or CJK, see [`is_cjk_letter`]) at or after `from`, or
/// the end of the text: SB8's look-ahead ends at a letter, and no sentence ends after one.
fn window_end(text: &str, from: usize) -> usize {
    text[from..]
        .char_indices()
        .find(|&(_, character)| character.is_ascii_alphabetic() || is_cjk_letter(character))
        .map_or(text.len(), |(offset, character)| {
            from + offset + character.len_utf8()
        })
}

/// The last position in `floor..=candidate` where the segmenter may start (see
/// [`for_each_bound`]): a letter or digit ([`is_anchor`]), or the text's start.
fn safe_start(text: &str, candidate: usize, floor: usize) -> Option<usize> {
    text[floor..candidate]
        .char_indices()
        .rev()
        .find(|&(_, character)| is_anchor(character))
        .map(|(offset, _)| floor + offset)
        .or((floor == 0).then_some(0))
}

/// Whether the line break ("\n", "\r\n", "\r") that holds `bytes[at]` neither follows nor
/// precedes another line break (across spaces and tabs only): such a break is read as
/// spaces, so hard-wrapped prose keeps its sentences.
fn is_lone_break(bytes: &[u8], at: usize) -> bool {
    let is_break = |byte: u8| byte == b'\n' || byte == b'\r';
    let is_blank = |byte: u8| byte == b' ' || byte == b'\t';
    let (start, end) = match bytes[at] {
        b'\n' if at > 0 && bytes[at - 1] == b'\r' => (at - 1, at + 1),
        b'\r' if bytes.get(at + 1) == Some(&b'\n') => (at, at + 2),
        _ => (at, at + 1),
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
    !follows_break && !precedes_break
}

/// `text[start..end]` into `out`, with every lone line break ([`is_lone_break`], judged in
/// the whole `text`) replaced by spaces. Built from the text's own slices and ASCII spaces,
/// so it needs no UTF-8 check (checking a copy of bytes was a tenth of the time of chunking
/// Chinese in sentences).
fn lone_breaks_as_spaces(text: &str, (start, end): (usize, usize), out: &mut String) {
    let bytes = text.as_bytes();
    out.clear();
    let mut copied = start;
    let mut at = start;
    while let Some(found) = memchr::memchr2(b'\n', b'\r', &bytes[at..end]) {
        let position = at + found;
        if is_lone_break(bytes, position) {
            out.push_str(&text[copied..position]);
            out.push(' ');
            copied = position + 1;
        }
        at = position + 1;
    }
    out.push_str(&text[copied..end]);
}

/// Number of sentences of `text` that hold a non-whitespace character.
#[must_use]
pub fn count_sentences(text: &str) -> usize {
    count_sentences_up_to(text, usize::MAX)
}

/// [`count_sentences`] when it is at most `limit`, else `limit + 1`: counting stops there.
#[must_use]
pub fn count_sentences_up_to(text: &str, limit: usize) -> usize {
    let mut count = 0;
    try_for_each_sentence(text, |start, end| {
        let (content_start, content_end) = trimmed(text, start, end);
        count += usize::from(content_start < content_end);
        count <= limit
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

/// Per byte: 0 a byte of no whitespace, 1 ASCII whitespace, 2 the lead byte of some
/// non-ASCII whitespace or invisible char (U+0085, U+00A0, U+00AD; U+061C; U+1680, U+180E;
/// U+2000..=U+206F; U+3000; U+FEFF), to be checked.
const WORD_BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        // `byte < 256`: the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        let value = byte as u8;
        table[byte] = if is_ascii_space(value) {
            1
        } else if matches!(value, 0xc2 | 0xd8 | 0xe1..=0xe3 | 0xef) {
            2
        } else {
            0
        };
        byte += 1;
    }
    table
};

/// The high bit of every byte of a u64.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Per byte of `block` (eight ASCII bytes), its high bit set where the byte is whitespace
/// ([`is_ascii_space`]: tab to carriage return, U+001C..=U+001F, space), else clear.
#[inline]
const fn ascii_whitespace(block: u64) -> u64 {
    (at_least(block, 0x09) & !at_least(block, 0x0e))
        | (at_least(block, 0x1c) & !at_least(block, 0x21))
}

/// Per byte of `block` (eight ASCII bytes), its high bit set where the byte is at least
/// `low` (below 0x80): `(byte | 0x80) - low` cannot borrow, and its high bit says so.
#[inline]
const fn at_least(block: u64, low: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    ((block | HIGH_BITS) - ONES * low) & HIGH_BITS
}

/// Per byte of `block`, its high bit set where the byte is `byte`, else clear (exact: the
/// low seven bits of each byte, plus seven bits, carry into its own high bit alone).
#[inline]
const fn bytes_equal(block: u64, byte: u8) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let differ = block ^ (ONES * byte as u64);
    !(((differ & !HIGH_BITS) + !HIGH_BITS) | differ) & HIGH_BITS
}

/// Per byte of `block`, its high bit set where a non-ASCII blank char may start (see
/// [`for_each_word_start`]): the lead bytes 0xC2, 0xD8 and 0xE0..=0xE2; 0xE3 only before
/// 0x80 0x80 (U+3000: the lead of all CJK punctuation, "、" and "。" among it, is no blank)
/// and 0xEF only before 0xBB (U+FEFF; "，" is 0xEF 0xBC 0x8C), or where the bytes after it
/// are in the next block.
#[inline]
const fn blank_leads(block: u64) -> u64 {
    const LAST_TWO: u64 = 0x8080 << 48;
    const LAST: u64 = 0x80 << 56;
    let continuation = bytes_equal(block, 0x80);
    let ideographic_space =
        bytes_equal(block, 0xe3) & ((continuation >> 8 & continuation >> 16) | LAST_TWO);
    let byte_order_mark = bytes_equal(block, 0xef) & ((bytes_equal(block, 0xbb) >> 8) | LAST);
    (bytes_equal(block & 0xfcfc_fcfc_fcfc_fcfc, 0xe0) & !bytes_equal(block, 0xe3))
        | bytes_equal(block, 0xc2)
        | bytes_equal(block, 0xd8)
        | ideographic_space
        | byte_order_mark
}

/// Calls `found(at, starts)` for the word starts of `bytes` (see [`count_words`]), in order:
/// `starts` has the high bit of byte `i` set when a word starts at `at + i` (`i < 8`).
///
/// Eight bytes at a time, in a u64 (SWAR: no intrinsics, so it runs everywhere): the
/// whitespace bytes are the ASCII ones found by [`ascii_whitespace`], and the word starts
/// are the other bytes whose byte before is whitespace (the continuation bytes of a char
/// never are: the byte before them is part of it). That holds up to the first lead byte of
/// a non-ASCII blank char (U+0085, U+00A0, U+00AD; U+061C; U+1680, U+180E;
/// U+2000..=U+206F; U+3000; U+FEFF: see [`blank_leads`]); at such a byte, one table look-up
/// ([`WORD_BYTES`]) and the char itself decide.
#[inline]
pub(crate) fn for_each_word_start(bytes: &[u8], found: impl FnMut(usize, u64)) {
    walk_word_starts(bytes, (0, true), bytes.len(), found);
}

/// [`for_each_word_start`] from the byte `at` (a char boundary; `after_space` says whether
/// the char before it that is not invisible is whitespace) to `stop`: returns where it
/// stopped (at `stop`, or past it when a blank char runs across it) and whether the last
/// char that is not invisible was whitespace.
#[inline]
pub(crate) fn walk_word_starts(
    bytes: &[u8],
    (mut at, mut after_space): (usize, bool),
    stop: usize,
    mut found: impl FnMut(usize, u64),
) -> (usize, bool) {
    while at < stop {
        if let Some(block) = bytes
            .get(at..at + 8)
            .filter(|_| at + 8 <= stop)
            .and_then(|block| <[u8; 8]>::try_from(block).ok())
        {
            let block = u64::from_le_bytes(block);
            let leads = if block & HIGH_BITS == 0 {
                0
            } else {
                blank_leads(block)
            };
            if leads == 0 {
                // Its own branch, so the next block's address does not wait on the masks.
                let space = ascii_whitespace(block) & !block;
                found(
                    at,
                    !space & HIGH_BITS & ((space << 8) | (u64::from(after_space) << 7)),
                );
                after_space = space >> 63 != 0;
                at += 8;
                continue;
            }
            let clean = leads.trailing_zeros() / 8;
            if clean > 0 {
                let kept = u64::MAX >> (64 - 8 * clean);
                let space = ascii_whitespace(block) & !block & kept;
                let starts =
                    !space & HIGH_BITS & kept & ((space << 8) | (u64::from(after_space) << 7));
                found(at, starts);
                after_space = space >> (8 * clean - 1) & 1 != 0;
                at += clean as usize;
                continue;
            }
        }
        match WORD_BYTES[usize::from(bytes[at])] {
            2 => {
                let blank = space_after(bytes, at);
                if blank > 0 {
                    if whitespace_after(bytes, at) > 0 {
                        after_space = true;
                    }
                    at += blank;
                    continue;
                }
                if after_space {
                    found(at, 0x80);
                }
                after_space = false;
            }
            class => {
                let space = class == 1;
                if after_space && !space {
                    found(at, 0x80);
                }
                after_space = space;
            }
        }
        at += 1;
    }
    (at, after_space)
}

/// Number of words of `text`: maximal runs of non-whitespace characters that hold a visible
/// one. An invisible char (a zero-width joiner, a soft hyphen, a byte order mark: see
/// `chars::is_invisible`) neither starts nor ends a word: the family emoji is one word, and
/// a text of only invisible chars, blank, counts 0.
#[must_use]
pub fn count_words(text: &str) -> usize {
    // The starts are summed per byte lane, and the lanes added up every 255 blocks: the
    // x86-64 baseline has no popcount instruction, and its software form per block cost more
    // than the walk.
    const LOW_BYTES: u64 = 0x00ff_00ff_00ff_00ff;
    let lanes_total = |lanes: u64| {
        let pairs = (lanes & LOW_BYTES) + (lanes >> 8 & LOW_BYTES);
        (pairs.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize
    };
    let (mut count, mut lanes, mut blocks) = (0, 0_u64, 0);
    for_each_word_start(text.as_bytes(), |_, starts| {
        lanes += starts >> 7;
        blocks += 1;
        if blocks == 255 {
            count += lanes_total(lanes);
            (lanes, blocks) = (0, 0);
        }
    });
    count + lanes_total(lanes)
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

    /// The whole text through the segmenter, as [`for_each_sentence`] gives it.
    fn reference(text: &str) -> Vec<(usize, usize)> {
        let mut copy = String::new();
        lone_breaks_as_spaces(text, (0, text.len()), &mut copy);
        copy.split_sentence_bound_indices()
            .map(|(start, sentence)| (start, start + sentence.len()))
            .collect()
    }

    #[test]
    fn lone_breaks_read_as_spaces() {
        let mut copy = String::new();
        for (text, expected) in [
            ("a\nb", "a b"),
            ("a\r\nb", "a  b"),
            ("a\rb\n", "a b "),
            ("a\n\nb", "a\n\nb"),
            ("a\n \t\nb", "a\n \t\nb"),
            ("一\n二\r\n\r\n三 \n 四", "一 二\r\n\r\n三   四"),
            ("", ""),
            ("\n", " "),
        ] {
            lone_breaks_as_spaces(text, (0, text.len()), &mut copy);
            assert_eq!(copy, expected, "{text:?}");
        }
    }

    #[test]
    fn whole_text_agrees() {
        const PIECES: [&str; 60] = [
            "a", "b", "Mr", "U", "S", "x", "Hello", "the", "5", "42", ".", ". ", "!", "?", "?!",
            "...", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\r", "\"", "'", ")", "(", "[", ",", ";",
            ":", "-", "\u{301}", "\u{200b}", "\u{ad}", "。", "！", "é", "Ω", "日本", "\u{2029}",
            "\u{85}", "\u{a0}", "\u{3000}", "\u{964}", "\u{2024}", "\x0c", "\u{1c}", "中文", "の",
            "」", "「", "한", "。」", "\u{30fb}", "4.5", "？", "。中", "\u{ff0e}", "！」",
        ];
        for text in crate::testing::random_texts(&PIECES, 20_000, 40, 0x9e37_79b9_7f4a_7c15) {
            let mut fast = Vec::new();
            for_each_sentence(&text, |start, end| fast.push((start, end)));
            assert_eq!(fast, reference(&text), "{text:?}");
            let count = count_sentences(&text);
            for limit in 0..4 {
                assert_eq!(count_sentences_up_to(&text, limit), count.min(limit + 1));
            }
            assert_eq!(count_words(&text), words_char_by_char(&text), "{text:?}");
        }
        if let Ok(root) = std::env::var("SPANCHUNK_CORPUS") {
            for folder in ["gutenberg", "markdown-en", "markdown-zh"] {
                let Ok(entries) = std::fs::read_dir(std::path::Path::new(&root).join(folder))
                else {
                    continue;
                };
                for entry in entries.flatten() {
                    let Ok(text) = std::fs::read_to_string(entry.path()) else {
                        continue;
                    };
                    let mut fast = Vec::new();
                    for_each_sentence(&text, |start, end| fast.push((start, end)));
                    assert!(fast == reference(&text), "{:?}", entry.path());
                }
            }
        }
    }

    fn words_char_by_char(text: &str) -> usize {
        let mut count = 0;
        let mut in_word = false;
        for character in text.chars() {
            if crate::text::chars::is_invisible(character) {
                continue;
            }
            let space = crate::text::chars::is_whitespace(character);
            count += usize::from(!space && !in_word);
            in_word = !space;
        }
        count
    }

    #[test]
    fn words_of_ascii_agree_with_a_char_by_char_count() {
        // Every ASCII byte, in runs that cross the eight-byte blocks at every offset.
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let length = usize::try_from(state % 40).unwrap();
            let text: String = (0..length)
                .map(|offset| {
                    let pick = (state >> (offset % 56)) ^ (offset as u64).wrapping_mul(0x9e37);
                    match pick % 4 {
                        0 => ' ',
                        1 => char::from(u8::try_from(pick % 0x80).unwrap()),
                        _ => 'w',
                    }
                })
                .collect();
            assert_eq!(count_words(&text), words_char_by_char(&text), "{text:?}");
        }
    }

    #[test]
    fn words_agree_at_every_lane_of_a_block() {
        // Each non-ASCII blank char (and a look-alike lead byte) at every offset of the
        // eight-byte blocks, between ASCII, CJK and emoji neighbours.
        let blanks = [
            "\u{85}", "\u{a0}", "\u{ad}", "\u{61c}", "\u{1680}", "\u{180e}", "\u{2000}",
            "\u{200b}", "\u{200d}", "\u{2028}", "\u{202f}", "\u{205f}", "\u{2060}", "\u{3000}",
            "\u{feff}", "\u{c0}", "\u{600}", "\u{1000}", "\u{3001}", "\u{ff0c}", "\u{800}", "。",
        ];
        for blank in blanks {
            for neighbour in ["a", "中", "😀", " ", "é"] {
                for pad in 0..16 {
                    let text = format!("{}{blank}{neighbour}{blank}{blank} x", "b".repeat(pad));
                    assert_eq!(count_words(&text), words_char_by_char(&text), "{text:?}");
                    let text = format!("{}{neighbour}{blank}中文", "中".repeat(pad));
                    assert_eq!(count_words(&text), words_char_by_char(&text), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn words_agree_with_a_char_by_char_count() {
        let reference = words_char_by_char;
        for text in [
            "中文 の\u{3000}한국어\u{2028}x\u{85}y\u{a0}z\u{1680}w\u{202f}v",
            "😀 😀😀\u{205f}é\u{301}\t\x0b\x0c\r\n\u{1c}a\u{1f}",
            "  lead and trail  ",
        ] {
            assert_eq!(count_words(text), reference(text), "{text:?}");
        }
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
