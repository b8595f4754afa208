//! Counting in the tokens of a `HuggingFace` tokenizer: whole texts, or word by word (or
//! piece by piece) where the tokenizer's own count is the sum of its parts.

use aho_corasick::AhoCorasick;
use tokenizers::Tokenizer;

use super::memo::Memo;
use super::pretoken::PretokenPattern;
use super::tiktoken::for_each_piece;

/// Where a `HuggingFace` tokenizer's count may be cut into the counts of words (see
/// `count_tokens_by_word`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Words {
    /// Nowhere: whole texts are counted.
    Never,
    /// At ASCII whitespace.
    AtWhitespace,
    /// At ASCII whitespace and around every CJK ideograph, which `BertNormalizer` with
    /// `handle_chinese_chars` surrounds with spaces.
    AtIdeographs,
    /// At the pieces of GPT-2's pattern, which the `ByteLevel` pre-tokeniser cuts (see
    /// `count_byte_pieces`).
    BytePieces,
}

/// The bytes at which `count_tokens_by_word` cuts a text: the ASCII whitespace that every
/// tokenizer it serves drops (other whitespace stays inside a word, where the tokenizer
/// handles it as usual).
const fn is_word_gap(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r')
}

/// Words longer than this are counted without being kept (a run of CJK with no space can be
/// a whole paragraph, and seldom repeats).
const WORD_MEMO_BYTES: usize = 128;

/// Tokens of `text` for a tokenizer that cuts at whitespace and drops it: the sum of its
/// words' counts, each word counted on its own by the tokenizer (or taken from `memo`).
///
/// Exact, not an estimate: such a tokenizer's normaliser works within a word (case, accents,
/// Unicode forms: no decomposition or composition crosses an ASCII space, tab or line
/// break), its pre-tokeniser makes every ASCII whitespace the end of a split and drops it,
/// its model tokenises each split on its own, and no added token holds whitespace. So the
/// splits of `text` are those of its words, in order, and the model sees the same strings.
/// With `Words::AtIdeographs`, each CJK ideograph is a word too: the normaliser itself puts
/// spaces around it before the pre-tokeniser cuts there.
/// Tests compare every count with the tokenizer's own over the corpus and random text.
///
/// Measured with all-MiniLM-L6-v2 on the corpus: keeping the model's output per split, but
/// still normalising and pre-tokenising each text (steps that track every byte's alignment),
/// left 70-85% of an encoding's time; counting words skips both steps for a word seen before.
pub(super) fn count_tokens_by_word(
    tokenizer: &Tokenizer,
    text: &str,
    memo: &mut Memo,
    words: Words,
) -> usize {
    let mut total = 0;
    let mut count_word = |word: &[u8]| {
        if word.is_empty() {
            return;
        }
        let counted = if let Some(count) = memo.get(word) {
            count
        } else {
            // Cut at ASCII bytes and character boundaries, so still UTF-8.
            let word_text = std::str::from_utf8(word).unwrap_or_default();
            let counted = count(tokenizer, word_text);
            if word.len() <= WORD_MEMO_BYTES {
                memo.insert(word, counted);
            }
            counted
        };
        // Saturating: a word the tokenizer fails on counts as "too big" (see `count`).
        total = counted.saturating_add(total);
    };
    let bytes = text.as_bytes();
    if words != Words::AtIdeographs {
        bytes.split(|&byte| is_word_gap(byte)).for_each(count_word);
        return total;
    }
    let (mut start, mut at) = (0, 0);
    while let Some(&byte) = bytes.get(at) {
        if is_word_gap(byte) {
            count_word(&bytes[start..at]);
            at += 1;
            start = at;
        } else if byte >= 0xE3 {
            // The lead byte of a character from U+3000 up (continuation bytes are below
            // 0xC0, so `at` is a character boundary here).
            let character = text[at..].chars().next().unwrap_or_default();
            let end = at + character.len_utf8();
            if is_ideograph(character) {
                count_word(&bytes[start..at]);
                count_word(&bytes[at..end]);
                start = end;
            }
            at = end;
        } else {
            at += 1;
        }
    }
    count_word(&bytes[start..]);
    total
}

/// Tokens of `text` for a tokenizer with no normaliser and GPT-2's `ByteLevel`
/// pre-tokeniser (its regex on, no prefix space), as most byte-level BPE tokenizers are: the
/// sum of the counts of the pieces of GPT-2's pattern, each piece counted on its own by the
/// tokenizer (or taken from `memo`).
///
/// Exact: that pre-tokeniser cuts the text at exactly those pieces (its pattern,
/// `\s+(?!\S)|\s+` at the end, finds what tiktoken's GPT-2 pattern finds; tested), maps each
/// piece's bytes to characters on its own, and the model tokenises each split on its own; a
/// piece alone is cut as the one piece it is. Added tokens are cut out of the text before
/// that, so a text that holds one is counted whole.
pub(super) fn count_byte_pieces(
    tokenizer: &Tokenizer,
    added: Option<&AhoCorasick>,
    text: &str,
    memo: &mut Memo,
) -> usize {
    if added.is_some_and(|added| added.is_match(text)) {
        return count(tokenizer, text);
    }
    let mut total = 0_usize;
    let pieces = for_each_piece(PretokenPattern::Gpt2, text, |piece| {
        let counted = if let Some(count) = memo.get(piece) {
            count
        } else {
            // Pieces end at character boundaries.
            let counted = count(tokenizer, std::str::from_utf8(piece).unwrap_or_default());
            if piece.len() <= WORD_MEMO_BYTES {
                memo.insert(piece, counted);
            }
            counted
        };
        total = counted.saturating_add(total);
    });
    match pieces {
        Some(()) => total,
        None => count(tokenizer, text),
    }
}

/// The characters `BertNormalizer` pads with spaces when `handle_chinese_chars` is on (the
/// ranges of its `is_chinese_char`, which the crate does not export).
fn is_ideograph(character: char) -> bool {
    matches!(
        u32::from(character),
        0x4E00..=0x9FFF
            | 0x3400..=0x4DBF
            | 0x20000..=0x2A6DF
            | 0x2A700..=0x2B73F
            | 0x2B740..=0x2B81F
            | 0x2B920..=0x2CEAF
            | 0xF900..=0xFAFF
            | 0x2F800..=0x2FA1F
    )
}

/// Where `tokenizer` counts every text as the sum of its parts, given a deterministic model:
/// - with no normaliser and the `ByteLevel` pre-tokeniser (regex on, no prefix space), at
///   the pieces of GPT-2's pattern (`count_byte_pieces`);
/// - with a normaliser made only of per-character steps, a pre-tokeniser that drops
///   whitespace, and no added token that holds a cut, at whitespace
///   (`count_tokens_by_word`), and around CJK ideographs too when the normaliser is
///   `BertNormalizer` with `handle_chinese_chars`.
///
/// Any other tokenizer (sentencepiece's metaspace, a prefix space, replacements, custom
/// splits) counts whole texts.
pub(super) fn word_cuts(tokenizer: &Tokenizer) -> Words {
    use tokenizers::models::ModelWrapper;
    use tokenizers::normalizers::NormalizerWrapper;
    use tokenizers::pre_tokenizers::PreTokenizerWrapper;

    fn per_character(normalizer: &NormalizerWrapper) -> bool {
        match normalizer {
            NormalizerWrapper::BertNormalizer(_)
            | NormalizerWrapper::StripNormalizer(_)
            | NormalizerWrapper::StripAccents(_)
            | NormalizerWrapper::NFC(_)
            | NormalizerWrapper::NFD(_)
            | NormalizerWrapper::NFKC(_)
            | NormalizerWrapper::NFKD(_)
            | NormalizerWrapper::Lowercase(_) => true,
            NormalizerWrapper::Sequence(steps) => steps.as_ref().iter().all(per_character),
            _ => false,
        }
    }
    fn drops_whitespace(pre_tokenizer: &PreTokenizerWrapper) -> bool {
        matches!(
            pre_tokenizer,
            PreTokenizerWrapper::BertPreTokenizer(_)
                | PreTokenizerWrapper::Whitespace(_)
                | PreTokenizerWrapper::WhitespaceSplit(_)
        )
    }
    fn only_splits(pre_tokenizer: &PreTokenizerWrapper) -> bool {
        drops_whitespace(pre_tokenizer)
            || matches!(
                pre_tokenizer,
                PreTokenizerWrapper::Punctuation(_) | PreTokenizerWrapper::Digits(_)
            )
    }

    let model = match tokenizer.get_model() {
        ModelWrapper::BPE(bpe) => bpe.dropout.is_none(),
        ModelWrapper::WordPiece(_) | ModelWrapper::WordLevel(_) | ModelWrapper::Unigram(_) => true,
    };
    if let Some(PreTokenizerWrapper::ByteLevel(byte_level)) = tokenizer.get_pre_tokenizer() {
        let plain = tokenizer.get_normalizer().is_none()
            && byte_level.use_regex
            && !byte_level.add_prefix_space;
        return if plain && model {
            Words::BytePieces
        } else {
            Words::Never
        };
    }
    let normalizer = tokenizer.get_normalizer().is_none_or(per_character);
    let pre_tokenizer = match tokenizer.get_pre_tokenizer() {
        Some(PreTokenizerWrapper::Sequence(steps)) => {
            let steps = steps.as_ref();
            steps.iter().all(only_splits) && steps.iter().any(drops_whitespace)
        }
        Some(single) => drops_whitespace(single),
        None => false,
    };
    if !(normalizer && pre_tokenizer && model) {
        return Words::Never;
    }
    let added = tokenizer.get_added_tokens_decoder();
    let added_hold =
        |cut: &dyn Fn(char) -> bool| added.values().any(|token| token.content.chars().any(cut));
    if added_hold(&|character| character.is_ascii() && is_word_gap(character as u8)) {
        return Words::Never;
    }
    match tokenizer.get_normalizer() {
        Some(NormalizerWrapper::BertNormalizer(bert))
            if bert.handle_chinese_chars && !added_hold(&is_ideograph) =>
        {
            Words::AtIdeographs
        }
        _ => Words::AtWhitespace,
    }
}

/// Tokens of `text`, special tokens left out. Counting never fails for a loaded tokenizer; a
/// failure is reported as "too big", which surfaces as an unsplittable character rather than
/// an oversized chunk.
pub(super) fn count(tokenizer: &Tokenizer, text: &str) -> usize {
    tokenizer
        .encode_fast(text, false)
        .map_or(usize::MAX / 4, |encoding| encoding.len())
}
