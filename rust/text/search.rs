//! Finding one separator level's matches in a piece of text (leftmost-longest,
//! non-overlapping), as fast as the level allows.
//!
//! Speed: `benches/NOTES.md`, under `rust/text/search.rs`.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use memchr::memmem::{FindIter, Finder};

use super::sentences::{for_each_sentence_boundary, SENTENCES};
use crate::error::ChunkError;

/// Largest level searched with one `memmem` pass per pattern.
const MAX_FINDERS: usize = 8;
const _: () = assert!(MAX_FINDERS <= 64, "pattern masks are u64");

/// The matcher of one separator level.
#[derive(Debug, Clone)]
pub(crate) enum Searcher {
    /// A few patterns: one SIMD `memmem` pass each, merged.
    Finders(Vec<Finder<'static>>),
    /// Many patterns: one automaton.
    Automaton(AhoCorasick),
    /// Sentence boundaries: the whitespace between two sentences (possibly empty).
    Sentences,
}

impl Searcher {
    pub(crate) fn new<'a>(
        patterns: impl IntoIterator<Item = &'a String>,
    ) -> Result<Self, ChunkError> {
        let mut patterns: Vec<&[u8]> = patterns.into_iter().map(String::as_bytes).collect();
        if patterns.contains(&SENTENCES.as_bytes()) {
            if patterns.len() > 1 {
                return Err(ChunkError::setting(
                    "separators",
                    "the sentence level (SENTENCES) stands alone: give it a level of its own, \
                     e.g. separators=[\"\\n\\n\", SENTENCES, \" \"]",
                ));
            }
            return Ok(Self::Sentences);
        }
        patterns.sort_unstable();
        patterns.dedup();
        if patterns.len() <= MAX_FINDERS {
            return Ok(Self::Finders(
                patterns
                    .iter()
                    .map(|pattern| Finder::new(pattern).into_owned())
                    .collect(),
            ));
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

    /// The mask of this level's patterns that can occur in a text whose missing bytes are
    /// those for which `absent` is true; bit `i` stands for pattern `i` (all bits set for
    /// the automaton, which is not pruned).
    pub(crate) fn mask(&self, absent: impl Fn(u8) -> bool) -> u64 {
        match self {
            Self::Automaton(_) | Self::Sentences => u64::MAX,
            Self::Finders(finders) => finders
                .iter()
                .enumerate()
                .filter(|(_, finder)| !finder.needle().iter().any(|&byte| absent(byte)))
                .fold(0, |mask, (index, _)| mask | (1 << index)),
        }
    }

    /// Its patterns, in the order of the bits of [`Searcher::mask`] (none for an automaton).
    pub(crate) fn patterns(&self) -> impl Iterator<Item = &[u8]> {
        let finders: &[Finder<'static>] = match self {
            Self::Finders(finders) => finders,
            Self::Automaton(_) | Self::Sentences => &[],
        };
        finders.iter().map(Finder::needle)
    }

    /// Calls `found(start, end)` for every match in `haystack`, in order, searching only the
    /// patterns whose bit is set in `enabled` (see [`Searcher::mask`]); true when anything
    /// matched. Streaming: memory stays flat however many matches a text holds (10 MB of
    /// newlines is 10 million matches).
    ///
    /// # Errors
    /// The first error `found` returns.
    pub(crate) fn for_each<E>(
        &self,
        haystack: &[u8],
        enabled: u64,
        mut found: impl FnMut(usize, usize) -> Result<(), E>,
    ) -> Result<bool, E> {
        let mut any = false;
        match self {
            Self::Sentences => {
                // Haystacks are pieces of a `str` cut at char boundaries.
                let Ok(text) = std::str::from_utf8(haystack) else {
                    return Ok(false);
                };
                any = for_each_sentence_boundary(text, found)?;
            }
            Self::Automaton(automaton) => {
                for matched in automaton.find_iter(haystack) {
                    any = true;
                    found(matched.start(), matched.end())?;
                }
            }
            Self::Finders(finders) if active(finders, enabled).is_power_of_two() => {
                // One pattern can occur (blank lines in a text with no "\r"): its matches,
                // with no merge (the merge's loop over the level's patterns at every match
                // was 3% of the engine on markdown-en).
                let finder = &finders[active(finders, enabled).trailing_zeros() as usize];
                let width = finder.needle().len();
                for start in finder.find_iter(haystack) {
                    any = true;
                    found(start, start + width)?;
                }
            }
            Self::Finders(finders) => {
                // A k-way merge of one `memmem` iterator per pattern: leftmost first, the
                // longest at one start, never overlapping (leftmost-longest).
                let mut iterators: [Option<FindIter<'_, '_>>; MAX_FINDERS] =
                    std::array::from_fn(|_| None);
                let mut heads = [usize::MAX; MAX_FINDERS];
                for (index, finder) in finders.iter().enumerate() {
                    if enabled & (1 << index) != 0 {
                        let mut iterator = finder.find_iter(haystack);
                        heads[index] = iterator.next().unwrap_or(usize::MAX);
                        iterators[index] = Some(iterator);
                    }
                }
                let mut after_last = 0;
                loop {
                    let mut best: Option<usize> = None;
                    for index in 0..finders.len() {
                        if heads[index] == usize::MAX {
                            continue;
                        }
                        best = match best {
                            Some(current)
                                if heads[current] < heads[index]
                                    || (heads[current] == heads[index]
                                        && finders[current].needle().len()
                                            >= finders[index].needle().len()) =>
                            {
                                Some(current)
                            }
                            _ => Some(index),
                        };
                    }
                    let Some(index) = best else { break };
                    let start = heads[index];
                    let end = start + finders[index].needle().len();
                    heads[index] = iterators[index]
                        .as_mut()
                        .and_then(Iterator::next)
                        .unwrap_or(usize::MAX);
                    if start >= after_last {
                        any = true;
                        after_last = end;
                        found(start, end)?;
                    }
                }
            }
        }
        Ok(any)
    }
}

/// The bits of `enabled` that stand for one of `finders`.
fn active(finders: &[Finder<'static>], enabled: u64) -> u64 {
    match finders.len() {
        0 => 0,
        count => enabled & (u64::MAX >> (64 - count)),
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
        let any = searcher
            .for_each(haystack.as_bytes(), u64::MAX, |start, end| {
                out.push((start, end));
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(any, !out.is_empty());
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
    fn finders_are_leftmost_longest() {
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
        assert_eq!(all(&["aa"], "aaaaa"), [(0, 2), (2, 4)]);
        assert_eq!(
            all(&[". ", "! ", "? ", "。", "！", "？"], "Hi. Yes! 好。好！"),
            [(2, 4), (7, 9), (12, 15), (18, 21)]
        );
    }

    #[test]
    fn one_enabled_pattern_finds_its_own_matches() {
        let patterns = [". ", "! ", "? ", "。"];
        let haystack = "Hi. Yes! No? 好。. x";
        let owned: Vec<String> = patterns
            .iter()
            .map(|pattern| (*pattern).to_owned())
            .collect();
        let searcher = Searcher::new(&owned).unwrap();
        let Searcher::Finders(finders) = &searcher else {
            panic!("four patterns use finders");
        };
        for (bit, finder) in finders.iter().enumerate() {
            let mut found = Vec::new();
            searcher
                .for_each(haystack.as_bytes(), 1 << bit, |start, end| {
                    found.push((start, end));
                    Ok::<(), ()>(())
                })
                .unwrap();
            let needle = std::str::from_utf8(finder.needle()).unwrap();
            let expected: Vec<(usize, usize)> = haystack
                .match_indices(needle)
                .map(|(start, matched)| (start, start + matched.len()))
                .collect();
            assert!(!expected.is_empty());
            assert_eq!(found, expected, "{needle:?}");
        }
    }

    #[test]
    fn sentence_level_finds_the_gaps_between_sentences() {
        let level = vec![SENTENCES.to_owned()];
        let searcher = Searcher::new(&level).unwrap();
        assert!(matches!(searcher, Searcher::Sentences));
        assert_eq!(searcher.mask(|_| true), u64::MAX);
        let mut found = Vec::new();
        searcher
            .for_each("Hi there. Bye!".as_bytes(), u64::MAX, |start, end| {
                found.push((start, end));
                Ok::<(), ()>(())
            })
            .unwrap();
        assert_eq!(found, [(9, 10)]);
        let mixed = vec![SENTENCES.to_owned(), ". ".to_owned()];
        assert!(Searcher::new(&mixed).is_err());
    }

    #[test]
    fn many_patterns_use_the_automaton() {
        let patterns = ["a", "b", "c", "d", "e", "f", "g", "h", "ij"];
        assert_eq!(all(&patterns, "xaijhz"), [(1, 2), (2, 4), (4, 5)]);
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
