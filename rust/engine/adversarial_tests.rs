//! Adversarial inputs for the structure modes: one-line minified code and Markdown with no
//! line breaks, huge tables and deep lists. The tests run each through the engine at a
//! moderate size and check the contract (spans in order, inside the text, each chunk within
//! the size, every non-blank byte covered); `benches/linear.py` times the same shapes.

use crate::code::Language;
use crate::engine::{tree_spans, Splitter, SplitterConfig, Structure};
use crate::sizing::Unit;

/// `prefix`, then `piece(0)`, `piece(1)`, ... while under `size` bytes, then `suffix`.
fn repeat_to(size: usize, prefix: &str, suffix: &str, piece: impl Fn(usize) -> String) -> String {
    let mut out = String::with_capacity(size + 1024);
    out.push_str(prefix);
    let mut index = 0;
    while out.len() + suffix.len() < size {
        out.push_str(&piece(index));
        index += 1;
    }
    out.push_str(suffix);
    out
}

/// One module of a minified bundle: functions, a class, objects and statements.
fn js_module(i: usize) -> String {
    format!(
        "function m{i}(e,t,n){{\"use strict\";var r=n({i}),o={{a:function(x){{return x*{i}}},\
         b:[1,2,{i}],c:{{d:\"s{i}\",e:null}}}};function i{i}(a,b){{if(a>b){{return a-b}}else\
         {{for(var k=0;k<b;k++){{a+=k}}return a}}}}class C{i}{{constructor(x){{this.x=x}}get v()\
         {{return this.x}}m(y){{return y+this.x}}}}const f{i}=(a)=>a+{i},g{i}=function(){{return \
         {i}}};t.exports={{i{i},C{i},f{i}}}}}"
    )
}

/// A one-line minified JavaScript bundle: every module a function in one array passed to a
/// loader (webpack's shape: one statement, the modules nested in it).
fn js_bundle(size: usize) -> String {
    repeat_to(
        size,
        "!function(e){var t={};function n(r){if(t[r])return t[r].exports;var o=t[r]={exports:{}};\
         return e[r].call(o.exports,o,o.exports,n),o.exports}return n(0)}([",
        "function(){}]);",
        |i| js_module(i) + ",",
    )
}

/// A one-line minified JavaScript bundle: the modules side by side at the top level.
fn js_flat(size: usize) -> String {
    repeat_to(size, "", "", |i| js_module(i) + ";")
}

/// One line of tiny top-level functions, each after a comment.
fn tiny_js(size: usize) -> String {
    repeat_to(size, "", "", |i| {
        format!("/*{i}*/function f{i}(a){{return a}}")
    })
}

/// One line of Python statements joined by semicolons (no definition fits on such a line).
fn minified_python(size: usize) -> String {
    repeat_to(size, "", "", |i| {
        format!("a{i}=f({i},[1,2,{i}],{{'k':{i}}});b{i}=a{i}.x if a{i} else None;print(b{i});")
    })
}

/// One line of C definitions: functions and structs.
fn minified_c(size: usize) -> String {
    repeat_to(size, "", "", |i| {
        format!(
            "struct s{i}{{int x;char*y;}};static int f{i}(int a,int b){{if(a>b){{return a-b;}}\
             for(int k=0;k<b;k++){{a+=k;}}return a+{i};}}"
        )
    })
}

/// One paragraph of words and inline markup, no line break.
fn markdown_paragraph(size: usize) -> String {
    repeat_to(size, "", "", |i| {
        format!("word{i} *em{i}* `code{i}` [link{i}](http://x/{i}) **strong** text, more; ")
    })
}

/// A table of many rows.
fn markdown_table(size: usize) -> String {
    repeat_to(size, "| a | b | c |\n|---|---|---|\n", "", |i| {
        format!("| cell {i} | *x{i}* | `y{i}` |\n")
    })
}

/// Lists nested 40 deep, again and again.
fn markdown_nested_lists(size: usize) -> String {
    repeat_to(size, "", "", |i| {
        let depth = i % 40;
        format!("{}- item {i} text\n", "  ".repeat(depth))
    })
}

/// One line: block quotes and list items nested in one another (a tenth of the line), then
/// words.
fn markdown_one_line(size: usize) -> String {
    repeat_to(size, &"> - ".repeat(size / 40), "", |i| format!("w{i} "))
}

/// An adversarial input: its name, its structure and its text of about a given size.
type Input = (&'static str, Structure, fn(usize) -> String);

/// Every adversarial input.
fn inputs() -> [Input; 9] {
    let code = |name| Structure::Code(Language::named(name));
    [
        ("js-bundle", code("javascript"), js_bundle),
        ("js-flat", code("javascript"), js_flat),
        ("js-tiny", code("javascript"), tiny_js),
        ("python-line", code("python"), minified_python),
        ("c-line", code("c"), minified_c),
        ("md-paragraph", Structure::Markdown, markdown_paragraph),
        ("md-table", Structure::Markdown, markdown_table),
        ("md-lists", Structure::Markdown, markdown_nested_lists),
        ("md-one-line", Structure::Markdown, markdown_one_line),
    ]
}

fn splitter(structure: Structure, chunk_size: usize) -> Splitter {
    let mut config = SplitterConfig::new(chunk_size);
    config.structure = structure;
    Splitter::new(config, Unit::Char).unwrap()
}

fn to_usize(value: i64) -> usize {
    usize::try_from(value).unwrap()
}

/// Checks the spans of one level over `text`: in order, inside the text (slicing it checks
/// that they are on chars), within the size, and together covering every byte that is not
/// whitespace.
fn check(name: &str, text: &str, spans: &[(usize, usize)], chunk_size: usize) {
    let mut covered = 0;
    for &(start, end) in spans {
        assert!(start < end && end <= text.len(), "{name}: {start}..{end}");
        assert!(start >= covered, "{name}: {start}..{end} after {covered}");
        assert!(
            text[covered..start].trim().is_empty(),
            "{name}: a gap at {covered}..{start}"
        );
        assert!(
            text[start..end].chars().count() <= chunk_size,
            "{name}: {start}..{end} over {chunk_size}"
        );
        covered = end;
    }
    assert!(text[covered..].trim().is_empty(), "{name}: the tail");
}

#[test]
fn adversarial_inputs_keep_the_contract() {
    for (name, structure, build) in inputs() {
        let text = build(200_000);
        for chunk_size in [400, 2000] {
            let spans = splitter(structure, chunk_size).split(&text).unwrap();
            check(name, &text, &spans, chunk_size);
        }
        let (parent, child) = (splitter(structure, 2000), splitter(structure, 400));
        let table = tree_spans(&[&parent, &child], &text).unwrap();
        for (level, chunk_size) in [(1, 2000), (0, 400)] {
            let spans: Vec<(usize, usize)> = table
                .records
                .iter()
                .filter(|record| record.0[0] == level)
                .map(|record| (to_usize(record.0[3]), to_usize(record.0[4])))
                .collect();
            check(name, &text, &spans, chunk_size);
        }
    }
}

/// The times of the structure modes (and of plain text) at 1, 2 and 4 MiB, or at N, 2N and
/// 4N with `ADVERSARIAL_MB=N`; `ADVERSARIAL=NAME` times the inputs whose name holds NAME:
/// `cargo test --lib adversarial_times -- --ignored --nocapture`.
#[test]
#[ignore = "a timing, not a check"]
fn adversarial_times() {
    let only = std::env::var("ADVERSARIAL").ok();
    let base: usize = std::env::var("ADVERSARIAL_MB").map_or(1, |mb| mb.parse().unwrap());
    for (name, structure, build) in inputs() {
        if only.as_deref().is_some_and(|only| !name.contains(only)) {
            continue;
        }
        print!("{name:14}");
        for mode in ["outline", "split400", "split2000", "tree", "plain"] {
            let mut times = Vec::new();
            for mb in [base, 2 * base, 4 * base] {
                let text = build(mb << 20);
                // The best of a few runs, for at least half a second.
                let (mut best, mut spent, mut runs) = (f64::MAX, 0.0, 0);
                while runs < 5 && (runs < 2 || spent < 0.5) {
                    let began = std::time::Instant::now();
                    match mode {
                        "split400" => drop(splitter(structure, 400).split(&text).unwrap()),
                        "split2000" => drop(splitter(structure, 2000).split(&text).unwrap()),
                        "outline" => drop(structure.outline(&text, None)),
                        "plain" => drop(splitter(Structure::Plain, 400).split(&text).unwrap()),
                        _ => {
                            let parent = splitter(structure, 2000);
                            let child = splitter(structure, 400);
                            drop(tree_spans(&[&parent, &child], &text).unwrap());
                        }
                    }
                    let took = began.elapsed().as_secs_f64();
                    best = best.min(took);
                    spent += took;
                    runs += 1;
                }
                times.push(best);
            }
            print!(
                " {mode} {:.3}/{:.3}/{:.3}s x{:.2} x{:.2}",
                times[0],
                times[1],
                times[2],
                times[1] / times[0],
                times[2] / times[1]
            );
        }
        println!();
    }
}
