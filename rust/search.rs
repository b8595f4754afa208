//! Finding one separator level's matches in a piece of text (leftmost-longest,
//! non-overlapping), as fast as the level allows.
//!
//! Performance notes (gutenberg, child size 400, release build): with one `aho-corasick`
//! automaton per level, 45% of the time went to the automaton and its rare-byte prefilter:
//! line breaks occur every ~70 bytes, so the prefilter stops at every one and the automaton
//! walk that verifies the candidate dominates. The default levels but two start with at most
//! three distinct bytes ("\n\n"/"\r\n\r\n", "\n"/"\r\n", spaces), so those use `memchr2`/
//! `memchr3` on the first bytes and verify candidates with a plain prefix compare, which is
//! leftmost-longest by construction (candidates come in order; longer patterns are tried
//! first). Levels with more distinct first bytes (sentence ends, clause marks) keep the
//! automaton (Teddy SIMD where it applies); they are only searched inside pieces that the
//! coarser levels could not make small enough.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::error::ChunkError;

/// The matcher of one separator level.
#[derive(Debug, Clone)]
pub(crate) enum Searcher {
    /// Patterns start with at most three distinct bytes: `memchr` on those, then a prefix
    /// compare. Patterns are sorted longest first.
    FirstBytes {
        firsts: Vec<u8>,
        patterns: Vec<Vec<u8>>,
    },
    /// Anything else.
    Automaton(AhoCorasick),
}

impl Searcher {
    pub(crate) fn new<'a>(
        patterns: impl IntoIterator<Item = &'a String>,
    ) -> Result<Self, ChunkError> {
        let mut patterns: Vec<Vec<u8>> = patterns
            .into_iter()
            .map(|pattern| pattern.as_bytes().to_vec())
            .collect();
        let mut firsts: Vec<u8> = patterns
            .iter()
            .filter_map(|pattern| pattern.first().copied())
            .collect();
        firsts.sort_unstable();
        firsts.dedup();
        if firsts.len() <= 3 && !firsts.is_empty() {
            patterns.sort_by(|left, right| right.len().cmp(&left.len()));
            patterns.dedup();
            return Ok(Self::FirstBytes { firsts, patterns });
        }
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .map(Self::Automaton)
            .map_err(|error| {
                ChunkError::setting(
                    "separators",
                    format!("cannot compile the separators: {error}"),
                )
            })
    }

    /// Appends the (start, end) offsets of every match in `haystack` to `out`.
    pub(crate) fn find_all(&self, haystack: &[u8], out: &mut Vec<(usize, usize)>) {
        match self {
            Self::Automaton(automaton) => out.extend(
                automaton
                    .find_iter(haystack)
                    .map(|found| (found.start(), found.end())),
            ),
            Self::FirstBytes { firsts, patterns } => {
                let mut after_last = 0;
                let mut verify = |position: usize| {
                    if position < after_last {
                        return;
                    }
                    let rest = &haystack[position..];
                    if let Some(pattern) = patterns.iter().find(|pattern| rest.starts_with(pattern))
                    {
                        after_last = position + pattern.len();
                        out.push((position, after_last));
                    }
                };
                match firsts.as_slice() {
                    [one] => memchr::memchr_iter(*one, haystack).for_each(&mut verify),
                    [one, two] => memchr::memchr2_iter(*one, *two, haystack).for_each(&mut verify),
                    [one, two, three] => {
                        memchr::memchr3_iter(*one, *two, *three, haystack).for_each(&mut verify)
                    }
                    _ => unreachable!("FirstBytes holds one to three first bytes"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(patterns: &[&str], haystack: &str) -> Vec<(usize, usize)> {
        let owned: Vec<String> = patterns
            .iter()
            .map(|pattern| (*pattern).to_owned())
            .collect();
        let searcher = Searcher::new(&owned).unwrap();
        let mut out = Vec::new();
        searcher.find_all(haystack.as_bytes(), &mut out);
        // Same answer as the automaton.
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&owned)
            .unwrap();
        let expected: Vec<(usize, usize)> = automaton
            .find_iter(haystack)
            .map(|found| (found.start(), found.end()))
            .collect();
        assert_eq!(out, expected, "{patterns:?} in {haystack:?}");
        out
    }

    #[test]
    fn first_bytes_are_leftmost_longest() {
        assert_eq!(
            all(&["\n\n", "\r\n\r\n"], "a\n\n\nb\r\n\r\n\r\nc"),
            [(1, 3), (5, 9)]
        );
        assert_eq!(all(&["\r\n", "\n"], "a\r\n\nb\r"), [(1, 3), (3, 4)]);
        assert_eq!(
            all(&[" ", "\t", "\u{3000}"], "a b\t\u{3000}c"),
            [(1, 2), (3, 4), (4, 7)]
        );
        assert_eq!(
            all(&["ab", "abc", "b"], "abcabxb"),
            [(0, 3), (3, 5), (6, 7)]
        );
    }

    #[test]
    fn many_first_bytes_use_the_automaton() {
        let patterns = [". ", "! ", "? ", "。", "！", "？"];
        assert_eq!(
            all(&patterns, "Hi. Yes! 好。好！"),
            [(2, 4), (7, 9), (12, 15), (18, 21)]
        );
        let owned: Vec<String> = patterns
            .iter()
            .map(|pattern| (*pattern).to_owned())
            .collect();
        assert!(matches!(
            Searcher::new(&owned).unwrap(),
            Searcher::Automaton(_)
        ));
    }
}
