//! Byte-level facts about UTF-8 text, with no settings: char counts, whitespace as Python
//! sees it, blank (whitespace or invisible) chars and trimming, which bytes a text lacks, and
//! cache prefetches. Every pass the engine makes over a text is built from these.

/// True for a byte that starts a UTF-8 sequence (not a continuation byte).
#[inline]
#[must_use]
#[allow(clippy::cast_possible_wrap)]
pub fn is_char_start(byte: u8) -> bool {
    // Continuation bytes are 0b10xx_xxxx, i.e. -64..=-65 as i8 and below.
    (byte as i8) >= -0x40
}

/// Number of code points in UTF-8 bytes: `bytecount::num_chars`, which picks AVX2 or SSE2 at
/// run time (about 4x a scalar count; it is the hottest loop of the engine).
#[inline]
#[must_use]
pub fn count_chars(bytes: &[u8]) -> usize {
    // Most calls measure a gap of a byte or two, or a short line: below 64 bytes the SIMD
    // dispatch costs more than the count itself, so eight bytes at a time in a u64
    // (continuation bytes are 0b10xx_xxxx: bit 7 set, bit 6 clear). The byte-at-a-time loop
    // it replaces was 8% of the engine's time on the Markdown folders (short lines).
    if bytes.len() < 64 {
        let mut words = bytes.chunks_exact(8);
        let mut continuation = 0;
        for word in &mut words {
            let mut eight = [0_u8; 8];
            eight.copy_from_slice(word);
            let word = u64::from_le_bytes(eight);
            continuation += (word & !(word << 1) & 0x8080_8080_8080_8080).count_ones() as usize;
        }
        let rest = words.remainder();
        continuation += rest.iter().filter(|&&byte| !is_char_start(byte)).count();
        bytes.len() - continuation
    } else {
        bytecount::num_chars(bytes)
    }
}

/// Whitespace as Python's `str.isspace` sees it: Unicode `White_Space` plus the information
/// separators U+001C..=U+001F, which Python counts and Rust's `char::is_whitespace` does not.
/// The contract ("no whitespace-only chunk", "every non-whitespace char covered") is checked
/// from Python, so the core must agree with Python exactly.
#[inline]
#[must_use]
pub fn is_whitespace(character: char) -> bool {
    character.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&character)
}

/// [`is_whitespace`] for an ASCII byte: tab to carriage return, the information separators
/// U+001C..=U+001F, and space.
#[inline]
#[must_use]
pub const fn is_ascii_space(byte: u8) -> bool {
    matches!(byte, b'\t'..=b'\r' | 0x1c..=b' ')
}

/// True for an invisible format char that carries no content on its own: the soft hyphen
/// U+00AD, the Arabic letter mark U+061C, the Mongolian vowel separator U+180E (`White_Space`
/// until Unicode 6.3), the zero-width space, non-joiner and joiner and the direction marks
/// U+200B..=U+200F, the bidirectional embeddings and overrides U+202A..=U+202E, the word
/// joiner and invisible operators U+2060..=U+2064, the bidirectional isolates and deprecated
/// format chars U+2066..=U+206F, and the zero-width no-break space (byte order mark) U+FEFF.
///
/// Left out on purpose, though Unicode counts them as default-ignorable too: the variation
/// selectors (U+FE00..=U+FE0F, U+E0100..) and tag chars (U+E0000..=U+E007F), which change
/// how the emoji or flag before them looks, so trimming one off a chunk's end would change
/// the text; the combining grapheme joiner U+034F and the Hangul fillers, which belong to
/// the sequence they sit in.
#[inline]
#[must_use]
pub fn is_invisible(character: char) -> bool {
    matches!(
        character,
        '\u{ad}'
            | '\u{61c}'
            | '\u{180e}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{206f}'
            | '\u{feff}'
    )
}

/// A char that is no content: whitespace ([`is_whitespace`]) or invisible
/// ([`is_invisible`]). A piece made only of blank chars is no chunk, and trimming strips
/// blank chars from chunk edges.
#[inline]
#[must_use]
pub fn is_blank(character: char) -> bool {
    is_whitespace(character) || is_invisible(character)
}

/// Every blank char ([`is_blank`]), in code point order: all of them lie below U+10000.
/// The Python layer strips custom strategies' pieces with these, so it agrees with the core.
#[must_use]
pub fn blank_chars() -> String {
    (0..=0xffff_u32)
        .filter_map(char::from_u32)
        .filter(|&character| is_blank(character))
        .collect()
}

/// The width in bytes of the char that starts at `bytes[at]` (a char boundary) when it is
/// blank ([`is_blank`]), else 0. The non-ASCII blank chars are few and fixed (Unicode
/// `White_Space`: U+0085, U+00A0, U+1680, U+2000..=U+200A, U+2028, U+2029, U+202F, U+205F,
/// U+3000; and the invisible chars of [`is_invisible`]), so their UTF-8 bytes are matched
/// as they are, with no decoding.
#[inline]
pub(crate) fn space_after(bytes: &[u8], at: usize) -> usize {
    match bytes[at..] {
        [byte, ..] if byte.is_ascii() => usize::from(is_ascii_space(byte)),
        [0xc2, 0x85 | 0xa0 | 0xad, ..] | [0xd8, 0x9c, ..] => 2,
        [0xe1, 0x9a, 0x80, ..]
        | [0xe1, 0xa0, 0x8e, ..]
        | [0xe2, 0x80, 0x80..=0x8f | 0xa8..=0xaf, ..]
        | [0xe2, 0x81, 0x9f..=0xa4 | 0xa6..=0xaf, ..]
        | [0xe3, 0x80, 0x80, ..]
        | [0xef, 0xbb, 0xbf, ..] => 3,
        _ => 0,
    }
}

/// The width in bytes of the char that starts at `bytes[at]` (a char boundary) when it is
/// whitespace ([`is_whitespace`], not the invisible chars), else 0.
#[inline]
pub(crate) fn whitespace_after(bytes: &[u8], at: usize) -> usize {
    match bytes[at..] {
        [byte, ..] if byte.is_ascii() => usize::from(is_ascii_space(byte)),
        [0xc2, 0x85 | 0xa0, ..] => 2,
        [0xe1, 0x9a, 0x80, ..]
        | [0xe2, 0x80, 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf, ..]
        | [0xe2, 0x81, 0x9f, ..]
        | [0xe3, 0x80, 0x80, ..] => 3,
        _ => 0,
    }
}

/// [`space_after`] for the char that ends at `bytes[end]` (a char boundary).
#[inline]
fn space_before(bytes: &[u8], end: usize) -> usize {
    match bytes[..end] {
        [.., byte] if byte.is_ascii() => usize::from(is_ascii_space(byte)),
        [.., 0xc2, 0x85 | 0xa0 | 0xad] | [.., 0xd8, 0x9c] => 2,
        [.., 0xe1, 0x9a, 0x80]
        | [.., 0xe1, 0xa0, 0x8e]
        | [.., 0xe2, 0x80, 0x80..=0x8f | 0xa8..=0xaf]
        | [.., 0xe2, 0x81, 0x9f..=0xa4 | 0xa6..=0xaf]
        | [.., 0xe3, 0x80, 0x80]
        | [.., 0xef, 0xbb, 0xbf] => 3,
        _ => 0,
    }
}

/// Trimmed bounds of `text[start..limit]`: blank chars ([`is_blank`]: whitespace and the
/// invisible format chars) stripped from both edges; equal bounds mean the region is blank.
#[inline]
#[must_use]
pub fn trimmed(text: &str, start: usize, limit: usize) -> (usize, usize) {
    // Byte by byte, never decoding a char: most pieces end with their separator's line
    // breaks, and `trim_end_matches` decoded every one (10% of the engine's time on
    // markdown-zh); then decoding only the non-ASCII edges was still a tenth of a
    // seeking cut on markdown-zh, whose pieces mostly end in "。".
    let bytes = text.as_bytes();
    let content_start = trimmed_start(text, start, limit);
    let mut content_end = limit;
    while content_end > content_start {
        let width = space_before(bytes, content_end);
        if width == 0 {
            break;
        }
        content_end -= width;
    }
    (content_start, content_end)
}

/// [`trimmed`]'s start alone.
#[inline]
#[must_use]
pub fn trimmed_start(text: &str, start: usize, limit: usize) -> usize {
    let bytes = text.as_bytes();
    let mut content_start = start;
    while content_start < limit {
        let width = space_after(bytes, content_start);
        if width == 0 {
            break;
        }
        content_start += width;
    }
    content_start
}

/// Which of `candidates` do not occur in `text`, in one pass over it: the text is read in
/// blocks that stay in the L1/L2 cache, each searched (`memchr3`, three bytes at a time) for
/// the candidates not found yet, and the scan stops once every candidate has been found
/// (within the first block, for most texts). One whole-text pass per group of three bytes
/// read the text from memory once per group on a text that lacks them.
#[must_use]
pub fn absent_bytes(text: &str, candidates: &[u8]) -> Vec<u8> {
    const BLOCK: usize = 32 * 1024;
    let mut missing = candidates.to_vec();
    let mut found = Vec::with_capacity(candidates.len());
    for block in text.as_bytes().chunks(BLOCK) {
        if missing.is_empty() {
            break;
        }
        found.clear();
        for group in missing.chunks(3) {
            let hit = match *group {
                [one] => memchr::memchr(one, block).is_some(),
                [one, two] => memchr::memchr2(one, two, block).is_some(),
                [one, two, three] => memchr::memchr3(one, two, three, block).is_some(),
                _ => false,
            };
            if hit {
                found.extend(
                    group
                        .iter()
                        .copied()
                        .filter(|&byte| memchr::memchr(byte, block).is_some()),
                );
            }
        }
        missing.retain(|byte| !found.contains(byte));
    }
    missing
}

/// Asks the CPU to fetch the cache line holding `address` (SSE, every x86-64 CPU; nothing
/// elsewhere). A hint: it never faults, whatever the address.
#[inline]
pub fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch has no effect a program can observe, and does not fault.
        #[allow(clippy::cast_possible_wrap)]
        unsafe {
            _mm_prefetch::<{ _MM_HINT_T0 }>(address.cast::<i8>());
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = address;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points() {
        assert_eq!(count_chars("aé😀中".as_bytes()), 4);
        // Every length either side of a u64 word and of the SIMD threshold, every mix.
        let sample = "aé😀中 b\u{301}\n".repeat(20);
        for start in 0..12 {
            for end in start..sample.len().min(start + 140) {
                if let Some(slice) = sample.get(start..end) {
                    assert_eq!(
                        count_chars(slice.as_bytes()),
                        slice.chars().count(),
                        "{slice:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn counts_code_points_at_every_block_edge() {
        for (holder, offset) in crate::testing::block_edge_texts() {
            let text = &holder[offset..];
            assert_eq!(
                count_chars(text.as_bytes()),
                text.chars().count(),
                "{text:?}"
            );
            prefetch(text.as_ptr());
            // A hint never faults: one past the end, and an address nothing owns.
            prefetch(text.as_ptr().wrapping_add(text.len()));
            prefetch(std::ptr::null());
        }
    }

    #[test]
    fn whitespace_matches_python() {
        for character in [
            '\u{1c}', '\u{1f}', ' ', '\t', '\u{85}', '\u{3000}', '\u{a0}',
        ] {
            assert!(is_whitespace(character), "{character:?}");
        }
        for character in ['\u{200b}', '\u{feff}', 'a', '\0'] {
            assert!(!is_whitespace(character), "{character:?}");
        }
    }

    #[test]
    fn ascii_space_is_whitespace() {
        for byte in 0..0x80_u8 {
            assert_eq!(
                is_ascii_space(byte),
                is_whitespace(char::from(byte)),
                "{byte:#x}"
            );
        }
    }

    #[test]
    // Every code point, a million strings: too slow for Miri, and no `unsafe` code.
    #[cfg_attr(miri, ignore)]
    fn blank_chars_are_matched_by_their_bytes() {
        // Every char, alone and between others, at both edges.
        for character in (0..=0x10_ffff).filter_map(char::from_u32) {
            let expected = if is_blank(character) {
                character.len_utf8()
            } else {
                0
            };
            let text = format!("a{character}b");
            let bytes = text.as_bytes();
            assert_eq!(space_after(bytes, 1), expected, "{character:?}");
            assert_eq!(
                space_before(bytes, 1 + character.len_utf8()),
                expected,
                "{character:?}"
            );
        }
        assert_eq!(trimmed("\u{3000}中\u{2009}", 0, 9), (3, 6));
        assert_eq!(trimmed("。\u{a0}", 0, 5), (0, 3));
        assert_eq!(trimmed(" \u{85}\u{2028} ", 0, 7), (7, 7));
    }

    #[test]
    // Every code point, a million strings: too slow for Miri, and no `unsafe` code.
    #[cfg_attr(miri, ignore)]
    fn invisible_chars_are_blank_and_trimmed() {
        for character in [
            '\u{feff}', '\u{200b}', '\u{200c}', '\u{200d}', '\u{2060}', '\u{ad}', '\u{180e}',
            '\u{200e}', '\u{202e}', '\u{2066}', '\u{61c}',
        ] {
            assert!(
                is_invisible(character) && is_blank(character),
                "{character:?}"
            );
            assert!(!is_whitespace(character), "{character:?}");
        }
        // Kept: they change the look of what comes before them, or are content.
        for character in ['\u{fe0f}', '\u{e007f}', '\u{34f}', '\u{2065}', 'a', '\0'] {
            assert!(!is_blank(character), "{character:?}");
        }
        // A piece of only invisible chars (and whitespace) trims to nothing.
        let only = "\u{feff}\u{200b} \u{200d}\u{2060}\n";
        assert_eq!(trimmed(only, 0, only.len()), (only.len(), only.len()));
        // At the edges they go; inside, and a ZWJ inside an emoji sequence, they stay.
        let text = "\u{feff}a\u{200b}b\u{200b}";
        assert_eq!(trimmed(text, 0, text.len()), (3, 8));
        let family = "\u{1f468}\u{200d}\u{1f469}";
        assert_eq!(trimmed(family, 0, family.len()), (0, family.len()));
        let heart = "\u{2764}\u{fe0f}";
        assert_eq!(trimmed(heart, 0, heart.len()), (0, heart.len()));
        let listed = blank_chars();
        let every: String = (0..=0x10_ffff_u32)
            .filter_map(char::from_u32)
            .filter(|&character| is_blank(character))
            .collect();
        assert_eq!(listed, every);
    }
}
