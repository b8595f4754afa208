//! Tests of `split.rs`: the splitter's chunks pinned on small texts.

use super::*;
use crate::engine::SplitterConfig;
use crate::sizing::Unit;

fn chunks(config: SplitterConfig, unit: Unit, text: &str) -> Vec<String> {
    let splitter = Splitter::new(config, unit).unwrap();
    splitter
        .split(text)
        .unwrap()
        .into_iter()
        .map(|(start, end)| text[start..end].to_owned())
        .collect()
}

fn sized(chunk_size: usize) -> SplitterConfig {
    SplitterConfig::new(chunk_size)
}

#[test]
fn masks_drop_exactly_the_patterns_with_an_absent_byte() {
    let mut config = SplitterConfig::new(10);
    config
        .separators
        .push(vec!["x\r".to_owned(), "。y".to_owned(), "z".to_owned()]);
    let splitter = Splitter::new(config, Unit::Char).unwrap();
    let absents: [&[u8]; 5] = [b"", b"\r", b"\r\xe3", b"\xe3\xef\r. ,", b"qz"];
    for absent in absents {
        let prepared = splitter.prepare_without(absent, None, None);
        let expected: Vec<u64> = splitter
            .levels
            .iter()
            .map(|level| level.mask(|byte| absent.contains(&byte)))
            .collect();
        assert_eq!(prepared.masks, expected, "{absent:?}");
        assert_eq!(prepared.lacks_cr, absent.contains(&b'\r'));
    }
}

#[test]
fn prefers_blank_lines_then_words() {
    assert_eq!(
        chunks(sized(10), Unit::Char, "aaaa bbbb\n\ncccc dddd eeee"),
        ["aaaa bbbb", "cccc dddd", "eeee"]
    );
}

#[test]
fn merges_small_paragraphs() {
    assert_eq!(
        chunks(sized(20), Unit::Char, "one\n\ntwo\n\nthree four five six"),
        ["one\n\ntwo", "three four five six"]
    );
}

#[test]
fn sentences_before_clauses() {
    assert_eq!(
        chunks(sized(12), Unit::Char, "Hi there. Yes, no, ok."),
        ["Hi there.", "Yes, no, ok."]
    );
}

#[test]
fn cjk_sentences() {
    assert_eq!(
        chunks(sized(4), Unit::Char, "你好。世界！"),
        ["你好。", "世界！"]
    );
}

#[test]
fn long_word_cut_by_graphemes() {
    assert_eq!(
        chunks(sized(4), Unit::Char, "abcdefghij"),
        ["abcd", "efgh", "ij"]
    );
    // e + combining acute is one grapheme: never split from its base.
    assert_eq!(
        chunks(sized(3), Unit::Char, "abe\u{301}cd"),
        ["ab", "e\u{301}c", "d"]
    );
}

#[test]
fn huge_grapheme_cut_by_code_points() {
    // A ZWJ left at a chunk's edge by the cut is blank (text/chars.rs): trimmed.
    let family = "👨\u{200d}👩\u{200d}👧"; // 5 code points, one grapheme
    assert_eq!(chunks(sized(2), Unit::Char, family), ["👨", "👩", "👧"]);
}

#[test]
fn byte_unit_never_cuts_a_character() {
    assert_eq!(chunks(sized(4), Unit::Byte, "éééé"), ["éé", "éé"]);
    assert_eq!(chunks(sized(5), Unit::Byte, "a😀b"), ["a😀", "b"]);
}

#[test]
fn keep_separator_modes() {
    let text = "aa. bb. cc";
    let mut config = sized(6);
    config.trim = false;
    assert_eq!(chunks(config.clone(), Unit::Char, text), ["aa. ", "bb. cc"]);
    config.keep_separator = KeepSeparator::Start;
    assert_eq!(chunks(config.clone(), Unit::Char, text), ["aa. bb", ". cc"]);
    config.keep_separator = KeepSeparator::None;
    assert_eq!(chunks(config, Unit::Char, text), ["aa.", "bb. cc"]);
}

#[test]
fn trim_off_keeps_every_character() {
    let text = "  one two\n\nthree  ";
    let mut config = sized(9);
    config.trim = false;
    let pieces = chunks(config, Unit::Char, text);
    assert_eq!(pieces.concat(), text);
    assert!(pieces.iter().all(|piece| piece.chars().count() <= 9));
}

#[test]
fn whitespace_only_text_gives_nothing() {
    assert!(chunks(sized(5), Unit::Char, " \n\t\u{3000} ").is_empty());
    assert!(chunks(sized(5), Unit::Char, "").is_empty());
}

#[test]
fn min_chunk_size_joins_small_pieces() {
    // "Mr." alone would end a chunk; with min 5 it sticks to what follows.
    let text = "Sunshine. Mr. Darcy.";
    assert_eq!(
        chunks(sized(13), Unit::Char, text),
        ["Sunshine. Mr.", "Darcy."]
    );
    let mut config = sized(13);
    config.min_chunk_size = 4;
    assert_eq!(
        chunks(config, Unit::Char, text),
        ["Sunshine.", "Mr. Darcy."]
    );
}

const HARRISON: &str = "Hi.\n\nI'm Harrison.\n\nHow? Are? You?\nOkay then f f f f.\nThis is a weird text to write, but gotta test the splittingggg some how.\n\nBye!\n\n-H.";

#[test]
fn chunks_end_at_the_coarsest_boundary_that_fits() {
    assert_eq!(
        chunks(sized(28), Unit::Char, HARRISON),
        [
            "Hi.\n\nI'm Harrison.",
            "How? Are? You?",
            "Okay then f f f f.",
            "This is a weird text to",
            "write,",
            "but gotta test the",
            "splittingggg some how.\n\nBye!",
            "-H."
        ]
    );
    assert_eq!(
        chunks(sized(10), Unit::Char, HARRISON)[..3],
        ["Hi.", "I'm", "Harrison."]
    );
}

#[test]
fn greedy_merging_fills_chunks() {
    let mut config = sized(28);
    config.merge = crate::engine::Merge::Greedy;
    assert_eq!(
        chunks(config, Unit::Char, HARRISON)[2..4],
        ["Okay then f f f f.\nThis is a", "weird text to write, but"]
    );
}

#[test]
fn overlap_starts_at_a_boundary() {
    let mut config = sized(11);
    config.overlap = 5;
    assert_eq!(
        chunks(config, Unit::Char, "aa bb cc dd ee ff"),
        ["aa bb cc dd", "cc dd ee ff"]
    );
}
