//! The pre-tokenising split of the tiktoken encodings: where each piece of a text
//! ends, as the encoding's regex finds it, answered by hand while every byte it depends on is
//! ASCII, and by the regex (fancy-regex, as tiktoken runs it) otherwise.
//!
//! Why by hand: chunking in tokens counts every byte about three times (its atom, its parent,
//! its child), and in English the regex was most of each count. fancy-regex finds the pieces
//! of the corpus at 57-61 MB/s (`o200k_base`); the `regex` crate on the same pattern without
//! its look-ahead (`\s+(?!\S)`, emulated afterwards) was no faster on English and 5x slower
//! on Chinese. Over ASCII the patterns reduce to a few runs of byte classes, read here from
//! one table.
//!
//! Measured on the corpus (pieces only, release build), hand path / fancy-regex, in MB/s:
//! `o200k_base` 324-345 / 60-67 on English, 234 / 95 on markdown-zh; `cl100k_base` 271-291 /
//! 34-36, 158 / 55; GPT-2's 239-293 / 33-41, 126 / 48. The hand path decides 96-97% of the
//! pieces in English and 66-69% in markdown-zh.
//!
//! The rule: a piece is decided here only when every byte the regex would look at to decide
//! it is ASCII (a run stops at a byte that cannot continue it; a non-ASCII byte might, so it
//! hands the piece to the regex). Tests compare the pieces with the regex's over the corpus
//! and random text of the characters the patterns treat specially.

/// The patterns answered here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
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

impl Pattern {
    /// The regex this pattern stands for, as tiktoken runs it.
    pub fn source(self) -> &'static str {
        match self {
            Self::O200k => tiktoken_rs::O200K_BASE_PAT_STR,
            Self::Cl100k => CL100K_BASE_PAT_STR,
            Self::Gpt2 => GPT2_PAT_STR,
        }
    }
}

/// Byte classes: the ASCII members of the patterns' character classes.
const OTHER: u8 = 0; // [^\s\p{L}\p{N}]: punctuation, symbols, control characters
const LOWER: u8 = 1; // a-z
const UPPER: u8 = 2; // A-Z
const DIGIT: u8 = 3; // 0-9
const SPACE: u8 = 4; // \s other than \r and \n: space, \t, \x0B, \x0C
const NEWLINE: u8 = 5; // \r, \n
const WIDE: u8 = 6; // any byte of a non-ASCII character: the regex decides

const CLASSES: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut byte: u8 = 0;
    loop {
        table[byte as usize] = match byte {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            b' ' | b'\t' | 0x0B | 0x0C => SPACE,
            b'\r' | b'\n' => NEWLINE,
            0x80..=0xFF => WIDE,
            _ => OTHER,
        };
        if byte == u8::MAX {
            break table;
        }
        byte += 1;
    }
};

/// The class of the byte at `at`, None past the end.
#[inline]
fn class(bytes: &[u8], at: usize) -> Option<u8> {
    bytes.get(at).map(|&byte| CLASSES[usize::from(byte)])
}

/// The end of the run of bytes of the classes in `members` (a bit set) from `at`; None if a
/// non-ASCII byte stops it (it might continue the run).
#[inline]
fn run(bytes: &[u8], mut at: usize, members: u8) -> Option<usize> {
    loop {
        match class(bytes, at) {
            Some(WIDE) => return None,
            Some(found) if members & (1 << found) != 0 => at += 1,
            _ => return Some(at),
        }
    }
}

const LETTERS: u8 = 1 << LOWER | 1 << UPPER;
const WHITESPACE: u8 = 1 << SPACE | 1 << NEWLINE;

/// The end of the piece that `pattern` matches at `start`, a piece boundary of `bytes`; None
/// when that depends on a non-ASCII byte (ask the regex).
#[inline]
pub fn piece_end(pattern: Pattern, bytes: &[u8], start: usize) -> Option<usize> {
    match pattern {
        Pattern::O200k => o200k(bytes, start),
        Pattern::Cl100k => cl100k(bytes, start),
        Pattern::Gpt2 => gpt2(bytes, start),
    }
}

/// `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
/// |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
/// |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
fn o200k(bytes: &[u8], start: usize) -> Option<usize> {
    match class(bytes, start)? {
        LOWER | UPPER => o200k_word(bytes, start),
        DIGIT => digits(bytes, start),
        NEWLINE => whitespace(bytes, start, false),
        first => {
            // SPACE or OTHER: the optional prefix of the two word alternatives.
            match class(bytes, start + 1) {
                Some(WIDE) => return None,
                Some(LOWER | UPPER) => return o200k_word(bytes, start + 1),
                Some(OTHER) if bytes[start] == b' ' => return symbols(bytes, start + 1, true),
                _ => {}
            }
            if first == OTHER {
                symbols(bytes, start, true)
            } else {
                whitespace(bytes, start, false)
            }
        }
    }
}

/// ASCII letters are upper or lower case only (no `Lt`, `Lm`, `Lo`, `M`), so the two word
/// alternatives of `o200k_base` match capitals then small letters, at least one letter.
fn o200k_word(bytes: &[u8], start: usize) -> Option<usize> {
    let capitals = run(bytes, start, 1 << UPPER)?;
    let end = run(bytes, capitals, 1 << LOWER)?;
    contraction(bytes, end)
}

/// `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` after a word ending at `end`.
fn contraction(bytes: &[u8], end: usize) -> Option<usize> {
    if bytes.get(end) != Some(&b'\'') {
        return Some(end);
    }
    // Case folding reaches beyond ASCII ('s' also matches U+017F): a non-ASCII byte here
    // goes to the regex.
    let lower = |at: usize| match class(bytes, at) {
        Some(WIDE) => None,
        _ => Some(bytes.get(at).map(u8::to_ascii_lowercase)),
    };
    Some(match (lower(end + 1)?, lower(end + 2)?) {
        (Some(b's' | b't' | b'm' | b'd'), _) => end + 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => end + 3,
        _ => end,
    })
}

/// `\p{N}{1,3}`.
fn digits(bytes: &[u8], start: usize) -> Option<usize> {
    let mut end = start + 1;
    while end < start + 3 {
        match class(bytes, end) {
            Some(DIGIT) => end += 1,
            Some(WIDE) => return None,
            _ => break,
        }
    }
    Some(end)
}

/// `[^\s\p{L}\p{N}]+` from `start`, then `[\r\n/]*` (`o200k_base`) or `[\r\n]*`.
fn symbols(bytes: &[u8], start: usize, slash: bool) -> Option<usize> {
    let mut end = run(bytes, start, 1 << OTHER)?;
    // An ASCII class: a non-ASCII byte only ends it.
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
/// (`\s+(?!\S)`), or the one character (`\s+`, `\s`).
fn whitespace(bytes: &[u8], start: usize, cl100k: bool) -> Option<usize> {
    let end = run(bytes, start, WHITESPACE)?;
    if cl100k && end == bytes.len() {
        return Some(end);
    }
    if let Some(last) = bytes[start..end]
        .iter()
        .rposition(|&byte| byte == b'\r' || byte == b'\n')
    {
        return Some(start + last + 1);
    }
    Some(if end == bytes.len() || end - start == 1 {
        end
    } else {
        end - 1
    })
}

/// `'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
/// |\s+$|\s*[\r\n]|\s+(?!\S)|\s` (possessive quantifiers dropped: none of them changes a
/// match of this pattern).
fn cl100k(bytes: &[u8], start: usize) -> Option<usize> {
    match class(bytes, start)? {
        LOWER | UPPER => run(bytes, start, LETTERS),
        DIGIT => digits(bytes, start),
        NEWLINE => whitespace(bytes, start, true),
        first => {
            if bytes[start] == b'\'' {
                let after = contraction(bytes, start)?;
                if after > start {
                    return Some(after);
                }
            }
            match class(bytes, start + 1) {
                Some(WIDE) => return None,
                Some(LOWER | UPPER) => return run(bytes, start + 1, LETTERS),
                Some(OTHER) if bytes[start] == b' ' => return symbols(bytes, start + 1, false),
                _ => {}
            }
            if first == OTHER {
                symbols(bytes, start, false)
            } else {
                whitespace(bytes, start, true)
            }
        }
    }
}

/// `'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s`
/// (case-sensitive contractions, runs of any length, no line-break rule).
fn gpt2(bytes: &[u8], start: usize) -> Option<usize> {
    let letters_or_digits = |at: usize| match class(bytes, at) {
        Some(LOWER | UPPER) => run(bytes, at, LETTERS),
        _ => run(bytes, at, 1 << DIGIT),
    };
    match class(bytes, start)? {
        LOWER | UPPER | DIGIT => letters_or_digits(start),
        NEWLINE | SPACE if bytes[start] != b' ' => whitespace_gpt2(bytes, start),
        first => {
            if bytes[start] == b'\'' {
                let second = bytes.get(start + 1).copied();
                let third = bytes.get(start + 2).copied();
                match (second, third) {
                    (Some(b's' | b'd' | b'm' | b't'), _) => return Some(start + 2),
                    (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => {
                        return Some(start + 3)
                    }
                    _ => {}
                }
            }
            if first == OTHER {
                return run(bytes, start, 1 << OTHER);
            }
            // A space, then a letter, digit or symbol run, or whitespace.
            match class(bytes, start + 1) {
                Some(WIDE) => None,
                Some(LOWER | UPPER | DIGIT) => letters_or_digits(start + 1),
                Some(OTHER) => run(bytes, start + 1, 1 << OTHER),
                _ => whitespace_gpt2(bytes, start),
            }
        }
    }
}

/// `\s++$|\s+(?!\S)|\s` from `start`: the whole run at the end of the text, else the run
/// but its last character, or the one character.
fn whitespace_gpt2(bytes: &[u8], start: usize) -> Option<usize> {
    let end = run(bytes, start, WHITESPACE)?;
    Some(if end == bytes.len() || end - start == 1 {
        end
    } else {
        end - 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fancy_regex::Regex;

    /// The pieces of `text`, decided here where possible and by `regex` otherwise.
    fn pieces<'a>(pattern: Pattern, regex: &Regex, text: &'a str) -> Vec<&'a str> {
        let mut found = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let (start, end) = match piece_end(pattern, text.as_bytes(), at) {
                Some(end) => (at, end),
                None => match regex.find_from_pos(text, at).unwrap() {
                    Some(piece) => (piece.start(), piece.end()),
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

    #[test]
    fn contraction_in_cl100k_comes_first() {
        let regex = Regex::new(Pattern::Cl100k.source()).unwrap();
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
                pieces(Pattern::Cl100k, &regex, text),
                regex_pieces(&regex, text),
                "{text:?}"
            );
        }
    }

    #[test]
    fn pieces_are_the_regex_pieces() {
        let patterns = [Pattern::O200k, Pattern::Cl100k, Pattern::Gpt2]
            .map(|pattern| (pattern, Regex::new(pattern.source()).unwrap()));
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
        texts.extend(crate::testing::corpus_texts(8, usize::MAX));
        for (pattern, regex) in &patterns {
            for text in &texts {
                assert_eq!(
                    pieces(*pattern, regex, text),
                    regex_pieces(regex, text),
                    "{pattern:?}: {:?}",
                    text.chars().take(80).collect::<String>()
                );
            }
        }
    }
}
