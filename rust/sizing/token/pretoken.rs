//! The pre-tokenising split of the tiktoken encodings: where each piece of a text
//! ends, as the encoding's regex finds it, answered by hand, and by the regex (fancy-regex,
//! as tiktoken runs it) only where case folding makes a contraction unclear.
//!
//! Why by hand: chunking in tokens counts every byte about three times (its atom, its parent,
//! its child), and in English the regex was most of each count. fancy-regex finds the pieces
//! of the corpus at 57-61 MB/s (`o200k_base`); the `regex` crate on the same pattern without
//! its look-ahead (`\s+(?!\S)`, emulated afterwards) was no faster on English and 5x slower
//! on Chinese. The patterns reduce to a few runs of character classes, read here from one
//! table.
//!
//! Why the classes come from the regex engine itself: a piece's end depends on whether a
//! character is a letter, a number, white space (and for `o200k_base` which case class it
//! is in), and a count differs from tiktoken's as soon as one character is classed
//! differently. A Unicode table crate would have to track regex-syntax's Unicode version;
//! asking fancy-regex, with the patterns' own classes (`CLASS_SOURCES`), is exact by
//! construction. Each distinct character is asked once per process (`KINDS`, a lazily
//! filled table of every code point), ASCII is a constant table.
//!
//! Measured on the corpus (pieces only, release build, `cargo test --release --lib
//! pieces_per_second -- --ignored --nocapture`), hand path / fancy-regex, in MB/s, medians
//! of 4 runs on a loaded 2-core machine: `o200k_base` 199 / 35-40 on English, 232 / 55 on
//! markdown-zh; `cl100k_base` 218-241 / 18, 321 / 30; GPT-2's 196-209 / 17-22, 295 / 26. The
//! hand path decides every piece of the corpus. Before, when it stopped at the first
//! non-ASCII byte (96-97% of the pieces in English, 66-69% in markdown-zh), the same runs
//! gave `o200k_base` 184-207 on English, 144 on markdown-zh; `cl100k_base` 161-176, 82;
//! GPT-2's 129-142, 67: on Chinese the third of the pieces left to the regex were most of
//! the time.
//!
//! The rule: a piece is decided here unless one of the letters of a contraction after an
//! apostrophe (`'s`, `'ll`, ...) is a non-ASCII character that case folding may match to it
//! (`ſ` is an `s` under `(?i)`); such pieces go to the regex. Tests compare the pieces with
//! the regex's over the corpus, random text of the characters the patterns class finely,
//! and random characters from the whole range.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

use fancy_regex::Regex;

/// The patterns answered here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PretokenPattern {
    /// `tiktoken_rs::O200K_BASE_PAT_STR`.
    O200k,
    /// `cl100k_base`'s pattern.
    Cl100k,
    /// GPT-2's pattern, which `p50k_base` and `r50k_base` use.
    Gpt2,
}

/// The pattern of `cl100k_base`, as tiktoken-rs compiles it (tiktoken-rs exports only
/// `o200k_base`'s; a test checks the encoders count alike).
const CL100K_BASE_PAT_STR: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// The pattern of `p50k_base` and `r50k_base` (GPT-2's), as tiktoken-rs compiles it (not
/// exported either).
const GPT2_PAT_STR: &str =
    "'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s";

impl PretokenPattern {
    /// The regex this pattern stands for, as tiktoken runs it.
    pub fn source(self) -> &'static str {
        match self {
            Self::O200k => tiktoken_rs::O200K_BASE_PAT_STR,
            Self::Cl100k => CL100K_BASE_PAT_STR,
            Self::Gpt2 => GPT2_PAT_STR,
        }
    }
}

// A character's kind: the classes of the patterns it is in, as bits. Every character is in
// exactly one of LETTER, NUMBER, SPACE and SYMBOL, so a kind of 0 is one not known yet.
const LETTER: u8 = 1; // \p{L}
const NUMBER: u8 = 1 << 1; // \p{N}
const SPACE: u8 = 1 << 2; // \s (White_Space)
const SYMBOL: u8 = 1 << 3; // [^\s\p{L}\p{N}]: punctuation, symbols, marks, controls, ...
const BREAK: u8 = 1 << 4; // [\r\n]
const CAPITAL: u8 = 1 << 5; // o200k_base's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
const SMALL: u8 = 1 << 6; // o200k_base's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
const FOLDS: u8 = 1 << 7; // (?i:[sdmtlvre]): may be a contraction's letter

/// Each class as the patterns spell it, for the regex to answer.
const CLASS_SOURCES: [(u8, &str); 8] = [
    (LETTER, r"\p{L}"),
    (NUMBER, r"\p{N}"),
    (SPACE, r"\s"),
    (SYMBOL, r"[^\s\p{L}\p{N}]"),
    (BREAK, r"[\r\n]"),
    (CAPITAL, r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    (SMALL, r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    (FOLDS, r"(?i:[sdmtlvre])"),
];

/// The kinds of the ASCII characters (a test checks them against `CLASS_SOURCES`).
const ASCII_KINDS: [u8; 128] = {
    let mut table = [SYMBOL; 128];
    let mut byte: u8 = 0;
    while byte < 128 {
        let folds = match byte.to_ascii_lowercase() {
            b's' | b'd' | b'm' | b't' | b'l' | b'v' | b'r' | b'e' => FOLDS,
            _ => 0,
        };
        table[byte as usize] = match byte {
            b'a'..=b'z' => LETTER | SMALL | folds,
            b'A'..=b'Z' => LETTER | CAPITAL | folds,
            b'0'..=b'9' => NUMBER,
            b'\r' | b'\n' => SPACE | BREAK,
            b' ' | b'\t' | 0x0B | 0x0C => SPACE,
            _ => SYMBOL,
        };
        byte += 1;
    }
    table
};

/// The kind of every code point, 0 until first asked (1.1 MB of zeroed memory, of which
/// only the pages of the scripts a text uses are ever touched). Threads that race on a new
/// character store the same kind.
static KINDS: [AtomicU8; 0x11_0000] = [const { AtomicU8::new(0) }; 0x11_0000];

/// The kind of `character`, as the regex classes it.
#[cold]
#[inline(never)]
fn classify(character: char) -> u8 {
    static CLASSES: OnceLock<Vec<(u8, Regex)>> = OnceLock::new();
    let classes = CLASSES.get_or_init(|| {
        CLASS_SOURCES
            .iter()
            .filter_map(|&(bit, source)| Some((bit, Regex::new(source).ok()?)))
            .collect()
    });
    let mut buffer = [0; 4];
    let text = character.encode_utf8(&mut buffer);
    classes
        .iter()
        .filter(|(_, class)| class.is_match(text).is_ok_and(|found| found))
        .fold(0, |kind, &(bit, _)| kind | bit)
}

/// The kind and length in bytes of the character at `at`, a character boundary of `text`;
/// None past the end.
#[inline]
fn char_at(text: &str, at: usize) -> Option<(u8, usize)> {
    let &byte = text.as_bytes().get(at)?;
    if byte.is_ascii() {
        return Some((ASCII_KINDS[usize::from(byte)], 1));
    }
    let character = text.get(at..)?.chars().next()?;
    let slot = &KINDS[character as usize];
    let kind = match slot.load(Ordering::Relaxed) {
        0 => {
            let kind = classify(character);
            slot.store(kind, Ordering::Relaxed);
            kind
        }
        known => known,
    };
    Some((kind, character.len_utf8()))
}

/// The end of the run of characters of a class in `members` (bits of a kind) from `at`.
#[inline]
fn class_run_end(text: &str, mut at: usize, members: u8) -> usize {
    while let Some((kind, len)) = char_at(text, at) {
        if kind & members == 0 {
            break;
        }
        at += len;
    }
    at
}

/// The end of the piece that `pattern` matches at `start`, a piece boundary of `text`; None
/// when that is left to the regex (see the module notes).
#[inline]
pub fn piece_end(pattern: PretokenPattern, text: &str, start: usize) -> Option<usize> {
    match pattern {
        PretokenPattern::O200k => o200k(text, start),
        PretokenPattern::Cl100k => cl100k(text, start),
        PretokenPattern::Gpt2 => gpt2(text, start),
    }
}

/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
/// |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
/// |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
fn o200k(text: &str, start: usize) -> Option<usize> {
    const WORD: u8 = CAPITAL | SMALL;
    let (first, first_len) = char_at(text, start)?;
    let after = start + first_len;
    // The optional first character of the word alternatives, tried with it, then without;
    // with it only where a letter or a mark follows.
    let prefix = first & (LETTER | NUMBER | BREAK) == 0
        && char_at(text, after).is_some_and(|(second, _)| second & WORD != 0);
    if prefix || first & WORD != 0 {
        let word = prefix
            .then(|| capitals_then_small(text, after))
            .flatten()
            .or_else(|| capitals_then_small(text, start))
            .or_else(|| prefix.then(|| capitals_and_small(text, after)).flatten())
            .or_else(|| capitals_and_small(text, start));
        if let Some(end) = word {
            return contraction(text, end);
        }
    }
    if first & NUMBER != 0 {
        return Some(numbers(text, start));
    }
    symbols(text, start, true).or_else(|| whitespace(text, start, false))
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+` from `start`, as the regex
/// backtracks: the run of capitals, then the run of small letters after it; if none follows,
/// the capitals up to the last one that is small too (`Lm`, `Lo` and `M` are both: a run of
/// Chinese is one piece). None if it does not match.
fn capitals_then_small(text: &str, start: usize) -> Option<usize> {
    let mut at = start;
    let mut last_small_end = None;
    while let Some((kind, len)) = char_at(text, at) {
        if kind & CAPITAL == 0 {
            if kind & SMALL != 0 {
                return Some(class_run_end(text, at + len, SMALL));
            }
            break;
        }
        at += len;
        if kind & SMALL != 0 {
            last_small_end = Some(at);
        }
    }
    last_small_end
}

/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*` from `start`; None if it does
/// not match.
fn capitals_and_small(text: &str, start: usize) -> Option<usize> {
    let capitals = class_run_end(text, start, CAPITAL);
    (capitals > start).then(|| class_run_end(text, capitals, SMALL))
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word ending at `end` (`cl100k_base`'s leading
/// contraction too: a piece that ends where it starts matched none). None if a non-ASCII
/// character might be one of its letters under case folding.
fn contraction(text: &str, end: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    if bytes.get(end) != Some(&b'\'') {
        return Some(end);
    }
    // The letter at `at` in lower case, 0 if there is none there.
    let letter = |at: usize| match bytes.get(at) {
        Some(&byte) if byte.is_ascii() => Some(byte.to_ascii_lowercase()),
        Some(_) => match char_at(text, at) {
            Some((kind, _)) if kind & FOLDS != 0 => None,
            _ => Some(0),
        },
        None => Some(0),
    };
    Some(match letter(end + 1)? {
        b's' | b't' | b'm' | b'd' => end + 2,
        b'r' | b'v' if letter(end + 2)? == b'e' => end + 3,
        b'l' if letter(end + 2)? == b'l' => end + 3,
        _ => end,
    })
}

/// `\p{N}{1,3}`.
fn numbers(text: &str, start: usize) -> usize {
    let mut end = start;
    for _ in 0..3 {
        match char_at(text, end) {
            Some((kind, len)) if kind & NUMBER != 0 => end += len,
            _ => break,
        }
    }
    end
}

/// ` ?[^\s\p{L}\p{N}]+` from `start`, then `[\r\n/]*` (`o200k_base`) or `[\r\n]*`; None if
/// it does not match.
fn symbols(text: &str, start: usize, slash: bool) -> Option<usize> {
    let bytes = text.as_bytes();
    let from = start + usize::from(bytes[start] == b' ');
    let mut end = class_run_end(text, from, SYMBOL);
    if end == from {
        return None;
    }
    while let Some(&byte) = bytes.get(end) {
        if byte == b'\r' || byte == b'\n' || (slash && byte == b'/') {
            end += 1;
        } else {
            break;
        }
    }
    Some(end)
}

/// The whitespace alternatives from `start`, the first of a run of whitespace `start..end`:
/// with a line break in it, up to its last line break (`\s*[\r\n]+`, `\s*[\r\n]`), unless
/// `cl100k_base`'s `\s+$` takes the whole run at the end of the text; else the whole run
/// at the end of the text, the run but its last character before anything else
/// (`\s+(?!\S)`), or the one character (`\s+`, `\s`). None if `start` is not whitespace.
fn whitespace(text: &str, start: usize, cl100k: bool) -> Option<usize> {
    let end = class_run_end(text, start, SPACE);
    if cl100k && end == text.len() {
        return Some(end);
    }
    // Line breaks are ASCII, so no byte of a wider character is taken for one.
    if let Some(last) = text.as_bytes()[start..end]
        .iter()
        .rposition(|&byte| byte == b'\r' || byte == b'\n')
    {
        return Some(start + last + 1);
    }
    whitespace_end(text, start, end)
}

/// `\s++$|\s+(?!\S)|\s+` over the run of whitespace `start..end`: the whole run at the end of
/// the text, else the run but its last character, or the one character; None for no run.
fn whitespace_end(text: &str, start: usize, end: usize) -> Option<usize> {
    let (last, _) = text[start..end].char_indices().next_back()?;
    Some(if end == text.len() || last == 0 {
        end
    } else {
        start + last
    })
}

/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
/// |\s+$|\s*[\r\n]|\s+(?!\S)|\s` (possessive quantifiers dropped: none of them changes a
/// match of this pattern).
fn cl100k(text: &str, start: usize) -> Option<usize> {
    if text.as_bytes().get(start) == Some(&b'\'') {
        let after = contraction(text, start)?;
        if after > start {
            return Some(after);
        }
    }
    let (first, first_len) = char_at(text, start)?;
    if first & LETTER != 0 {
        return Some(class_run_end(text, start, LETTER));
    }
    if first & (NUMBER | BREAK) == 0 {
        // The optional first character before the letters.
        let after = start + first_len;
        let letters = class_run_end(text, after, LETTER);
        if letters > after {
            return Some(letters);
        }
    }
    if first & NUMBER != 0 {
        return Some(numbers(text, start));
    }
    symbols(text, start, false).or_else(|| whitespace(text, start, true))
}

/// `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
/// (case-sensitive contractions, runs of any length, no line-break rule).
fn gpt2(text: &str, start: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let first = *bytes.get(start)?;
    if first == b'\'' {
        match (bytes.get(start + 1), bytes.get(start + 2)) {
            (Some(b's' | b'd' | b'm' | b't'), _) => return Some(start + 2),
            (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => return Some(start + 3),
            _ => {}
        }
    }
    // One run of letters, numbers or symbols, after an optional space.
    let from = start + usize::from(first == b' ');
    if let Some((kind, _)) = char_at(text, from) {
        for class in [LETTER, NUMBER, SYMBOL] {
            if kind & class != 0 {
                return Some(class_run_end(text, from, class));
            }
        }
    }
    whitespace_end(text, start, class_run_end(text, start, SPACE))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of `text`, decided here where possible and by `regex` otherwise. Where the
    /// regex decides, the text there must hold an apostrophe before a non-ASCII character
    /// that case folding may match to a contraction's letter (the one case left to it).
    fn pieces<'a>(pattern: PretokenPattern, regex: &Regex, text: &'a str) -> Vec<&'a str> {
        let mut found = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let (start, end) = match piece_end(pattern, text, at) {
                Some(end) => (at, end),
                None => match regex.find_from_pos(text, at).unwrap() {
                    Some(piece) => {
                        let reach: Vec<char> = text[at..]
                            .chars()
                            .take(piece.as_str().chars().count() + 3)
                            .collect();
                        let folds = |at: usize| {
                            reach.get(at).is_some_and(|&folded| {
                                !folded.is_ascii() && classify(folded) & FOLDS != 0
                            })
                        };
                        assert!(
                            (0..reach.len())
                                .any(|at| reach[at] == '\'' && (folds(at + 1) || folds(at + 2))),
                            "{pattern:?} left {reach:?} to the regex"
                        );
                        (piece.start(), piece.end())
                    }
                    None => break,
                },
            };
            found.push(&text[start..end]);
            at = end;
        }
        found
    }

    fn regex_pieces<'a>(regex: &Regex, text: &'a str) -> Vec<&'a str> {
        regex
            .find_iter(text)
            .map(|piece| piece.unwrap().as_str())
            .collect()
    }

    fn assert_pieces_are_the_regex_pieces(texts: &[String]) {
        for pattern in [
            PretokenPattern::O200k,
            PretokenPattern::Cl100k,
            PretokenPattern::Gpt2,
        ] {
            let regex = Regex::new(pattern.source()).unwrap();
            for text in texts {
                assert_eq!(
                    pieces(pattern, &regex, text),
                    regex_pieces(&regex, text),
                    "{pattern:?}: {:?}",
                    text.chars().take(80).collect::<String>()
                );
            }
        }
    }

    #[test]
    fn ascii_kinds_are_the_regex_classes() {
        for byte in 0u8..128 {
            assert_eq!(
                ASCII_KINDS[usize::from(byte)],
                classify(char::from(byte)),
                "{byte:#x}"
            );
        }
    }

    #[test]
    fn every_character_is_in_one_class() {
        for character in (0..=0x10_ffff).filter_map(char::from_u32) {
            let text = character.to_string();
            let (kind, len) = char_at(&text, 0).unwrap();
            assert_eq!(len, text.len());
            assert_eq!(
                (kind & (LETTER | NUMBER | SPACE | SYMBOL)).count_ones(),
                1,
                "{character:?}"
            );
        }
    }

    #[test]
    fn contraction_in_cl100k_comes_first() {
        let regex = Regex::new(PretokenPattern::Cl100k.source()).unwrap();
        for text in [
            "'sure",
            "'LL do",
            "x'",
            "'",
            "'Ve",
            "don't  \n",
            "  x",
            " \t\n  ",
            "a  ",
        ] {
            assert_eq!(
                pieces(PretokenPattern::Cl100k, &regex, text),
                regex_pieces(&regex, text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn pieces_are_the_regex_pieces() {
        // Every ASCII byte, and the non-ASCII characters next to which the ASCII rules stop.
        let mut alphabet: Vec<String> = (0u8..128)
            .map(|byte| char::from(byte).to_string())
            .collect();
        for extra in [
            "'s", "'S", "'ll", "'VE", "'re", "'d", "'\u{17f}", "ſ", "é", "e\u{301}", "\u{301}",
            "\u{a0}", "\u{3000}", "\u{85}", "\u{2028}", "²", "½", "٣", "汉", "。", "—", "😀", "ǅ",
            "ʰ", "  ", "\r\n", "\n\n", " /", "/\n",
        ] {
            alphabet.push(extra.to_string());
        }
        let mut texts = crate::testing::random_texts(&alphabet, 20_000, 60, 0x2545_f491_4f6c_dd1d);
        texts.extend(crate::testing::corpus_texts(usize::MAX, usize::MAX));
        assert_pieces_are_the_regex_pieces(&texts);
    }

    /// Strings of the characters that the patterns class finely beyond ASCII, and of their
    /// look-alikes.
    #[rustfmt::skip]
    const HOSTILE: &[&str] = &[
        // CJK, kana (ー and 々 are modifier letters), Hangul, fullwidth punctuation.
        "汉", "字", "の", "カ", "ー", "々", "한", "。", "，", "「", "」", "：", "、",
        // Latin with combining marks (spacing, enclosing), cased and uncased letters.
        "é", "e\u{301}", "\u{301}", "\u{308}\u{308}", "A\u{30a}", "\u{20dd}", "\u{903}",
        "É", "Σ", "ß", "ẞ", "İ", "ı", "ﬀ", "ª", "\u{212a}", "\u{212b}",
        // Titlecase and modifier letters, letter numbers.
        "ǅ", "ǈ", "ᾈ", "ʰ", "ˆ", "Ⅻ", "ⅻ",
        // Digits and numbers of other scripts.
        "٣", "۴", "१", "１", "𝟙", "²", "½", "0", "7",
        // Unicode spaces, and look-alikes that are not White_Space.
        "\u{a0}", "\u{2028}", "\u{2029}", "\u{3000}", "\u{85}", "\u{1680}", "\u{2009}",
        "\u{202f}", "\u{205f}", "\u{180e}", "\u{200b}", "\u{feff}", "\u{1c}",
        // Joiners, emoji, variation selectors, flags, keycaps.
        "\u{200d}", "\u{200c}", "😀", "👍🏽", "👨‍👩‍👧", "\u{fe0f}", "🇫🇷", "#\u{fe0f}\u{20e3}",
        // Apostrophes and contraction-like sequences, characters that fold to ASCII.
        "'", "'", "'s", "'S", "'\u{17f}", "\u{17f}", "'t", "'T", "'ll", "'LL", "'lL",
        "'l\u{17f}", "'l", "'ve", "'VE", "'Re", "'m", "'D", "'\u{212a}", "'\u{131}", "'é",
        "'汉", "’", "’s",
        // Line breaks and whitespace mixes.
        "\r\n", "\n", "\r", "\r\r\n", " \r\n ", "\n\u{a0}", "\u{3000}\n", " ", " ", "  ", "\t",
        // ASCII letters, symbols.
        "a", "Z", "word", "Cap", "ALL", ".", "/", "-", "#",
    ];

    #[test]
    #[allow(clippy::cast_possible_truncation)] // code points below 0x110000
    fn hostile_unicode_pieces_are_the_regex_pieces() {
        let mut alphabet: Vec<String> = HOSTILE.iter().copied().map(String::from).collect();
        // Characters from the whole range, and more from the BMP.
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for range in [0x11_0000, 0x1_0000, 0x800] {
            alphabet.extend(
                std::iter::repeat_with(&mut next)
                    .filter_map(|random| char::from_u32((random % range) as u32))
                    .take(150)
                    .map(String::from),
            );
        }
        let texts = crate::testing::random_texts(&alphabet, 30_000, 40, 0x5851_f42d_4c95_7f2d);
        assert_pieces_are_the_regex_pieces(&texts);
    }

    /// The files of one folder of the shared corpus (`$SPANCHUNK_CORPUS`, else
    /// `../shared/corpus`).
    fn corpus_folder(folder: &str) -> Vec<String> {
        let root = std::env::var_os("SPANCHUNK_CORPUS").map_or_else(
            || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
            std::path::PathBuf::from,
        );
        let mut paths: Vec<_> = std::fs::read_dir(root.join(folder))
            .expect("the shared corpus")
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.is_file())
            .collect();
        paths.sort();
        paths
            .iter()
            .map(|path| std::fs::read_to_string(path).expect("a UTF-8 corpus file"))
            .collect()
    }

    /// The "pieces only" figures of the module notes: MB/s of the hand path (with the
    /// regex where it gives up) and of fancy-regex alone, best of 15, per folder and pattern.
    #[test]
    #[ignore = "timing, not a check: cargo test --release --lib pieces_per_second -- --ignored --nocapture"]
    #[allow(clippy::cast_precision_loss)] // figures to print
    fn pieces_per_second() {
        use std::time::Instant;
        for folder in ["markdown-en", "markdown-zh", "gutenberg"] {
            let texts = corpus_folder(folder);
            let megabytes = texts.iter().map(String::len).sum::<usize>() as f64 / 1e6;
            for pattern in [
                PretokenPattern::O200k,
                PretokenPattern::Cl100k,
                PretokenPattern::Gpt2,
            ] {
                let regex = Regex::new(pattern.source()).unwrap();
                let best = |pass: &dyn Fn(&str) -> (usize, usize)| {
                    let mut counts = (0, 0);
                    let seconds = (0..15)
                        .map(|_| {
                            let started = Instant::now();
                            counts = texts.iter().fold((0, 0), |(all, hand), text| {
                                let (text_all, text_hand) = pass(text);
                                (all + text_all, hand + text_hand)
                            });
                            started.elapsed().as_secs_f64()
                        })
                        .fold(f64::INFINITY, f64::min);
                    (megabytes / seconds, counts)
                };
                let (hand_speed, (all, by_hand)) = best(&|text| {
                    let (mut all, mut by_hand, mut at) = (0, 0, 0);
                    while at < text.len() {
                        at = match piece_end(pattern, text, at) {
                            Some(end) => {
                                by_hand += 1;
                                end
                            }
                            None => regex.find_from_pos(text, at).unwrap().unwrap().end(),
                        };
                        all += 1;
                    }
                    (all, by_hand)
                });
                let (regex_speed, _) = best(&|text| (regex.find_iter(text).count(), 0));
                println!(
                    "{folder} {pattern:?}: hand path {hand_speed:.0} MB/s ({:.1}% of the \
                     pieces by hand), fancy-regex {regex_speed:.0} MB/s",
                    100.0 * by_hand as f64 / all as f64
                );
            }
        }
    }
}
