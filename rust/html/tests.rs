use super::{is_html_path, Content, Page};
use crate::markdown::{BLOCK_LEVEL, INNER_LEVEL};

fn text(source: &str) -> String {
    Page::parse(source, Content::Main).text
}

fn headings(page: &Page) -> Vec<(usize, u8, &str)> {
    page.outline
        .headings
        .iter()
        .map(|heading| (heading.start, heading.level, heading.text.as_str()))
        .collect()
}

#[test]
fn blocks_inline_and_white_space() {
    assert_eq!(
        text("<p>Hello <b>world</b>\n   again</p><p>next</p>"),
        "Hello world again\n\nnext"
    );
    // Inline markup keeps the words where they are (no space where the source has none).
    assert_eq!(text("<p>a<i>b</i>c</p>"), "abc");
    assert_eq!(
        text("<div>one<br>two<br><br>three</div>"),
        "one\ntwo\n\nthree"
    );
    assert_eq!(text("<ul><li>a<li>b</ul><p>c"), "a\nb\n\nc");
}

#[test]
fn entities_pre_and_dropped_elements() {
    assert_eq!(
        text("<p>T &amp; x &lt;b&gt; w&eacute;rld &#169; &nbsp;!</p>"),
        "T & x <b> wérld © \u{a0}!"
    );
    assert_eq!(
        text("<p>a</p><pre>\n  fn x() {\n      y\n  }</pre><p>b</p>"),
        "a\n\n  fn x() {\n      y\n  }\n\nb"
    );
    assert_eq!(
        text(
            "<head><title>T</title><style>p{}</style></head><body><script>if (a<b) x()\
             </script><p>kept</p><noscript>no</noscript><template><p>t</p></template>\
             <svg><text>s</text></svg><img alt=\"a  picture\" src=x.png></body>"
        ),
        "kept\n\na picture"
    );
}

#[test]
fn main_content_and_its_fallbacks() {
    let page = "<nav>menu</nav><main><h1>Title</h1><p>body</p></main><footer>f</footer>";
    assert_eq!(text(page), "Title\n\nbody");
    assert_eq!(
        Page::parse(page, Content::Body).text,
        "menu\n\nTitle\n\nbody\n\nf"
    );
    assert_eq!(text("<div>x</div><div role=main><p>y</p></div>"), "y");
    assert_eq!(text("<p>x</p><article>one</article>"), "one");
    assert_eq!(
        text("<article>one</article><article>two</article>"),
        "one\n\ntwo"
    );
    // A marked part without text is no main content.
    assert_eq!(text("<main></main><p>shown</p>"), "shown");
}

#[test]
fn headings_and_levels() {
    let page = Page::parse(
        "<h1>A <code>b</code></h1><p>p</p><h2 id=x>C<a href=#x>§</a></h2>\
         <ul><li>i<ul><li>j</li></ul></li></ul><table><tr><th>h</th><th>k</th></tr>\
         <tr><td>1</td><td>2</td></tr></table>",
        Content::Main,
    );
    assert_eq!(page.text, "A b\n\np\n\nC§\n\ni\nj\n\nh | k\n1 | 2");
    assert_eq!(headings(&page), [(0, 1, "A b"), (8, 2, "C§")]);
    assert_eq!(page.outline.boundaries[0], [0]);
    assert_eq!(page.outline.boundaries[1], [8]);
    let at = |needle: &str| page.text.find(needle).unwrap();
    assert_eq!(
        page.outline.boundaries[BLOCK_LEVEL],
        [at("p"), at("i"), at("h |")]
    );
    assert_eq!(
        page.outline.boundaries[INNER_LEVEL],
        [at("j"), at("h |"), at("1 |")]
    );
}

#[test]
fn source_spans_point_at_the_words() {
    let source = "<p>Hello <b>w&eacute;rld</b>,\n   again</p>";
    let page = Page::parse(source, Content::Main);
    assert_eq!(page.text, "Hello wérld, again");
    let span = |needle: &str| {
        let start = page.text.find(needle).unwrap();
        let (from, to) = page.source_span(start, start + needle.len());
        &source[from..to]
    };
    assert_eq!(span("Hello"), "Hello");
    assert_eq!(span("wérld"), "w&eacute;rld");
    assert_eq!(span("é"), "&eacute;");
    assert_eq!(span("rld, again"), "rld</b>,\n   again");
    assert_eq!(span(page.text.as_str()), &source[3..source.len() - 4]);
}

#[test]
fn broken_markup_loses_no_words() {
    assert_eq!(text("<p>a <b>b <i>c</b> d</i> e"), "a b c d e");
    assert_eq!(text("</p>x</div><p>y"), "x\n\ny");
    assert_eq!(text("<table><tr><td>a<td>b<tr><td>c</table>"), "a | b\nc");
    assert_eq!(text("a\r\nb &amp c &#xZ;"), "a b & c &#xZ;");
    assert_eq!(text(""), "");
    assert_eq!(text("<p>   </p>"), "");
}

#[test]
fn html_file_names() {
    assert!(is_html_path("a/b/index.HTML"));
    assert!(is_html_path("x.htm") && is_html_path("x.xhtml"));
    assert!(!is_html_path("x.md") && !is_html_path("html"));
}

#[test]
fn a_page_of_white_space_is_empty() {
    assert_eq!(text("&nbsp;"), "");
    assert_eq!(text("<p>&nbsp; </p>\u{3000}"), "");
}
