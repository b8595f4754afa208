//! The engine over arbitrary text and arbitrary settings, asserting the chunking contract
//! (README.md "The contract") on every span table it returns:
//!
//! 1. exact spans: byte offsets on char boundaries, char offsets that count the chars before;
//! 2. strict size, in each level's unit;
//! 3. no empty or blank chunk, starts strictly increasing within a level, index 0, 1, 2, ...;
//! 4. coverage of every char that is not blank, at every level (exactly once without overlap);
//! 5. overlap at most `overlap` units, and only within one parent;
//! 6. hierarchy: a child inside its parent, every parent with a child;
//!
//! and that seeking cuts exactly as the atom engine does. The first bytes of the input choose
//! the settings, the rest (decoded as UTF-8, lossily) is the text.
#![no_main]

use _core::engine::{
    check_levels, tree_spans_by_atoms, KeepSeparator, Splitter, SplitterConfig, Structure,
};
use _core::sizing::token::TokenSizer;
use _core::sizing::{Sizer, Unit};
use _core::text::chars::is_blank;
use _core::tree_spans;
use libfuzzer_sys::fuzz_target;

/// Separators a fuzzed level may use instead of the defaults.
const SEPARATORS: [&str; 10] = [
    "\n\n", "\n", ". ", " ", ",", "a", "ab", "\u{200b}", "。", "\r\n",
];

struct Settings<'a> {
    bytes: &'a [u8],
}

impl Settings<'_> {
    fn byte(&mut self) -> u8 {
        match self.bytes.split_first() {
            Some((&first, rest)) => {
                self.bytes = rest;
                first
            }
            None => 0,
        }
    }
}

/// One level's sizer: chars, bytes or tokens (cl100k_base).
fn sizer(choice: u8) -> Box<dyn Sizer> {
    match choice % 5 {
        0 | 1 => Box::new(Unit::Char),
        2 | 3 => Box::new(Unit::Byte),
        _ => Box::new(TokenSizer::tiktoken("cl100k_base").expect("a compiled-in encoding")),
    }
}

fuzz_target!(|data: &[u8]| {
    let mut settings = Settings { bytes: data };
    let level_count = 1 + usize::from(settings.byte() % 3);
    let unit = settings.byte();
    let mut sizes = Vec::new();
    let mut size = 4 + usize::from(settings.byte());
    for _ in 0..level_count {
        sizes.push(size);
        size = (size / 2).max(1);
    }
    let mut splitters = Vec::new();
    let mut overlaps = Vec::new();
    for (position, &chunk_size) in sizes.iter().enumerate() {
        let mut config = SplitterConfig::new(chunk_size);
        let flags = settings.byte();
        config.trim = flags & 1 == 0;
        config.keep_separator = match (flags >> 1) % 3 {
            0 => KeepSeparator::End,
            1 => KeepSeparator::Start,
            _ => KeepSeparator::None,
        };
        if flags & 8 != 0 {
            config.structure = Structure::Markdown;
        }
        if flags & 16 != 0 {
            config.min_chunk_size = usize::from(settings.byte()) % chunk_size;
        }
        if flags & 32 != 0 {
            let mask = settings.byte();
            let chosen: Vec<String> = SEPARATORS
                .iter()
                .enumerate()
                .filter(|(index, _)| mask & (1 << (index % 8)) != 0)
                .map(|(_, separator)| (*separator).to_owned())
                .collect();
            if !chosen.is_empty() {
                config.separators = chosen
                    .into_iter()
                    .map(|separator| vec![separator])
                    .collect();
            }
        }
        // Only the leaves overlap (an upper level with an overlap is refused).
        if position + 1 == sizes.len() && flags & 64 != 0 {
            config.overlap = usize::from(settings.byte()) % chunk_size;
        }
        overlaps.push(config.overlap);
        let Ok(splitter) = Splitter::with_sizer(config, sizer(unit)) else {
            return;
        };
        splitters.push(splitter);
    }
    let levels: Vec<&Splitter> = splitters.iter().collect();
    if check_levels(&levels).is_err() {
        return;
    }
    let text = String::from_utf8_lossy(settings.bytes);
    let text = text.as_ref();
    let Ok(table) = tree_spans(&levels, text) else {
        // Refusals are errors, never panics: a char larger than a token size.
        return;
    };
    let by_atoms = tree_spans_by_atoms(&levels, text).expect("the atom engine cuts it too");
    assert_eq!(table.records, by_atoms.records, "seeking and atoms differ");

    let top = level_count - 1;
    // Rows by level, as (index, parent, start_byte, end_byte, start_char, end_char).
    let mut by_level: Vec<Vec<[usize; 6]>> = vec![Vec::new(); level_count];
    for record in &table.records {
        let [level, index, parent, start_byte, end_byte, start_char, end_char] = record.0;
        let level = usize::try_from(level).expect("level >= 0");
        let parent = usize::try_from(parent).unwrap_or(usize::MAX);
        let row = [index, start_byte, end_byte, start_char, end_char]
            .map(|value| usize::try_from(value).expect("offsets >= 0"));
        by_level[level].push([row[0], parent, row[1], row[2], row[3], row[4]]);
    }
    let char_at = |byte: usize| text[..byte].chars().count();
    let visible: Vec<(usize, char)> = text
        .char_indices()
        .filter(|&(_, character)| !is_blank(character))
        .collect();
    for (level, rows) in by_level.iter().enumerate() {
        let splitter = levels[top - level];
        let chunk_size = sizes[top - level];
        let overlap = overlaps[top - level];
        let mut covered = vec![0_i64; text.len() + 1];
        for (row_number, &[index, parent, start_byte, end_byte, start_char, end_char]) in
            rows.iter().enumerate()
        {
            // 1. exact spans.
            assert!(
                start_byte < end_byte && end_byte <= text.len(),
                "level {level} row {row_number}"
            );
            assert!(text.is_char_boundary(start_byte) && text.is_char_boundary(end_byte));
            assert_eq!(
                (start_char, end_char),
                (char_at(start_byte), char_at(end_byte))
            );
            let chunk = &text[start_byte..end_byte];
            // 2. strict size.
            let measured = splitter.sizer().size(chunk).expect("a built-in sizer");
            assert!(
                measured <= chunk_size,
                "level {level}: {chunk:?} is {measured} > {chunk_size}"
            );
            // 3. not blank, in order, numbered.
            assert!(
                !chunk.chars().all(is_blank),
                "level {level}: blank chunk {chunk:?}"
            );
            assert_eq!(index, row_number, "level {level}: index");
            if row_number > 0 {
                let previous = rows[row_number - 1];
                assert!(
                    start_byte > previous[2],
                    "level {level}: starts not increasing"
                );
                // 5. overlap: within one parent, at most `overlap` units.
                if start_byte < previous[3] {
                    assert_eq!(parent, previous[1], "level {level}: overlap across parents");
                    let shared = splitter
                        .sizer()
                        .size(&text[start_byte..previous[3]])
                        .expect("a built-in sizer");
                    assert!(
                        shared <= overlap,
                        "level {level}: overlap {shared} > {overlap}"
                    );
                }
            }
            covered[start_byte] += 1;
            covered[end_byte] -= 1;
            // 6. hierarchy.
            if level < top {
                let parents = &by_level[level + 1];
                let parent_row = parents.get(parent).expect("a parent row that exists");
                assert!(
                    parent_row[2] <= start_byte && end_byte <= parent_row[3],
                    "child outside"
                );
            } else {
                assert_eq!(parent, usize::MAX, "a top-level row has no parent");
            }
        }
        // 4. coverage, from the running count of chunks over each byte.
        let mut depth = 0_i64;
        let mut depth_at = vec![0_i64; text.len()];
        for (byte, slot) in depth_at.iter_mut().enumerate() {
            depth += covered[byte];
            *slot = depth;
        }
        for &(byte, character) in &visible {
            let count = depth_at[byte];
            assert!(
                count >= 1,
                "level {level}: {character:?} at byte {byte} in no chunk"
            );
            if overlap == 0 {
                assert_eq!(
                    count, 1,
                    "level {level}: {character:?} at byte {byte} twice"
                );
            }
        }
        if level > 0 {
            // Every parent has a child.
            for parent in 0..by_level[level].len() {
                assert!(
                    by_level[level - 1].iter().any(|row| row[1] == parent),
                    "level {level}: parent {parent} has no child"
                );
            }
        }
    }
});
