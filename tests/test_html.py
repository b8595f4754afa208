"""HTML pages as structure: the readable text, its sections, and the spans back to the page.

The readable text is checked against an independent extractor (html5lib's spec-following
tree builder, walked here) for lost, added and reordered words, page by page, over a sample
of the Rust toolchain's documentation (mdBook and rustdoc pages, on every machine with
rustc); the chunking contract runs over a larger sample of the same tree.
"""

from __future__ import annotations

import difflib
import html
import subprocess
from pathlib import Path

import html5lib
import pytest
from _contract import check_chunks, parent_child_levels, recursive_levels
from hypothesis import given, settings
from hypothesis import strategies as st
from spanchunk import HtmlChunker, MarkdownChunker, ParentChildChunker

# What the reference drops and what it counts as a block (a word never spans one).
DROPPED = {
    "script", "style", "template", "noscript", "head", "title", "svg", "canvas", "iframe",
    "object", "embed", "select", "textarea", "button", "datalist", "audio", "video", "map",
}  # fmt: skip
BLOCKS = {
    "p", "div", "address", "article", "aside", "blockquote", "center", "details", "dialog",
    "dd", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3",
    "h4", "h5", "h6", "header", "hgroup", "hr", "li", "main", "nav", "ol", "ul", "menu", "pre",
    "section", "summary", "table", "tr", "td", "th", "caption", "br", "legend", "search",
}  # fmt: skip


def reference_words(source: str, content: str = "main") -> list[str]:
    """The words of a page's readable text, by html5lib's tree (no spanchunk code)."""
    root = html5lib.parse(source, namespaceHTMLElements=False)
    body = root.find("body")
    assert body is not None

    def words_of(element: object) -> list[str]:
        parts: list[str] = []

        def walk(node: object) -> None:
            tag = node.tag if isinstance(node.tag, str) else None  # type: ignore[attr-defined]
            if tag is not None and tag.startswith("{"):
                tag = tag.rsplit("}", 1)[1]  # an SVG or MathML element, by its namespace
            if tag is None or tag in DROPPED:
                return
            if tag in BLOCKS:
                parts.append("\n")
            if tag == "img" and node.get("alt"):  # type: ignore[attr-defined]
                parts.append(f" {node.get('alt')} ")  # type: ignore[attr-defined]
            if node.text:  # type: ignore[attr-defined]
                parts.append(node.text)  # type: ignore[attr-defined]
            for child in node:  # type: ignore[attr-defined]
                walk(child)
                if child.tail:
                    parts.append(child.tail)
            if tag in BLOCKS:
                parts.append("\n")

        walk(element)
        return [word for word in "".join(parts).split() if word != "|"]

    if content == "main":
        marked = [
            node
            for node in body.iter()
            if node.tag == "main" or (node.get("role") or "").lower() == "main"
        ]
        articles = [node for node in body.iter() if node.tag == "article"]
        target = marked[0] if marked else articles[0] if len(articles) == 1 else None
        if target is not None:
            words = words_of(target)
            if words:
                return words
    return words_of(body)


def spanchunk_words(text: str) -> list[str]:
    return [word for word in text.split() if word != "|"]


def differences(expected: list[str], got: list[str]) -> dict[str, list[str]]:
    """Words lost, added and replaced (a reordering shows as both), by kind."""
    found: dict[str, list[str]] = {"lost": [], "added": [], "replaced": []}
    matcher = difflib.SequenceMatcher(a=expected, b=got, autojunk=False)
    for kind, a0, a1, b0, b1 in matcher.get_opcodes():
        if kind == "delete":
            found["lost"] += expected[a0:a1]
        elif kind == "insert":
            found["added"] += got[b0:b1]
        elif kind == "replace":
            found["replaced"].append(f"{expected[a0:a1]} -> {got[b0:b1]}")
    return {kind: items for kind, items in found.items() if items}


def rust_docs() -> Path:
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    root = Path(sysroot) / "share" / "doc" / "rust" / "html"
    assert root.is_dir(), f"the Rust documentation is not at {root}: install rustup's rust-docs"
    return root


def sample_pages(every: int) -> list[Path]:
    pages = sorted(rust_docs().rglob("*.html"))
    assert len(pages) > 1000
    return pages[::every]


# ------------------------------------------------------------------------- pinned outputs


def read(page: str, content: str = "main") -> str:
    return HtmlChunker(content=content).read(page).text  # type: ignore[arg-type]


def test_inline_markup_keeps_words_in_order() -> None:
    # LlamaIndex #23190 splits this into "Hello\nagain" and "world".
    assert read("<p>Hello <b>world</b> again</p>") == "Hello world again"
    # LangChain #38404 drops or reorders inline text around links and emphasis.
    assert read("<p>See <a href=x>the <em>guide</em></a>, then run it.</p>") == (
        "See the guide, then run it."
    )
    assert read("<p>a<i>b</i>c <code>d</code></p>") == "abc d"


def test_h1_stays_on_the_path_after_an_h2() -> None:
    # LangChain #40409 loses the h1 once an h2 appears.
    page = "<h1>Book</h1><p>intro</p><h2>Part</h2><p>body</p><h2>Next</h2><p>more</p>"
    chunks = HtmlChunker(chunk_size=15).chunk(page)
    assert [(c.metadata["headings"], c.text) for c in chunks] == [
        (("Book",), "Book\n\nintro"),
        (("Book", "Part"), "Part\n\nbody"),
        (("Book", "Next"), "Next\n\nmore"),
    ]


def test_pinned_pages() -> None:
    assert read("<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>") == (
        "k | v\na | 1"
    )
    assert read("<pre>\nfn main() {\n    x &amp;&amp; y\n}</pre>") == "fn main() {\n    x && y\n}"
    assert read("<p>caf&eacute; &copy; &#x1F600; &lt;tag&gt; &amp</p>") == "café © 😀 <tag> &"
    assert read("<p>no <b>end <i>tags") == "no end tags"
    assert read("plain words, no markup at all") == "plain words, no markup at all"
    page = "<nav>menu</nav><main><p>text</p></main><footer>f</footer>"
    assert read(page) == "text"
    assert read(page, "body") == "menu\n\ntext\n\nf"


def test_source_spans_highlight_the_passage() -> None:
    page = (
        "<html><head><title>t</title></head><body><h1>Caf&eacute;</h1>"
        "<p>First   paragraph\nhere.</p><p>Second <b>one</b>.</p></body></html>"
    )
    source = page.encode()
    chunks = HtmlChunker(chunk_size=25).chunk(page)
    for chunk in chunks:
        start, end = chunk.metadata["source_start_byte"], chunk.metadata["source_end_byte"]
        passage = source[start:end].decode()
        # The passage, its tags removed and its references decoded, is the chunk's text (but
        # for white space).
        plain = html.unescape("".join(part.split(">")[-1] for part in passage.split("<")))
        assert "".join(plain.split()) == "".join(chunk.text.split()), (passage, chunk.text)


def test_a_table_is_cut_between_rows_with_its_header() -> None:
    rows = "".join(f"<tr><td>name {n}</td><td>value {n}</td></tr>" for n in range(60))
    page = "<h1>T</h1><p>Before.</p><table><thead><tr><th>Name</th><th>Value</th></tr>"
    page += f"</thead><tbody>{rows}</tbody></table><p>After.</p>"
    chunker = HtmlChunker(chunk_size=200)
    text = chunker.read(page).text
    chunks = chunker.chunk(page)
    check_chunks(text, chunks, recursive_levels(200), "char")
    table_start = text.index("Name | Value")
    table_end = text.index("value 59") + len("value 59")
    in_table = [c for c in chunks if c.start_char < table_end and c.end_char > table_start]
    assert len(in_table) > 3
    for chunk in in_table:
        # Whole rows only, and the header row with every chunk of the table.
        assert chunk.start_char <= table_start or text[chunk.start_char - 1] == "\n"
        assert chunk.end_char >= table_end or text[chunk.end_char] == "\n"
        header = chunk.metadata["table_header"]
        assert header["text"] == "Name | Value"
        assert text[header["start_char"] : header["end_char"]] == "Name | Value"
        encoded = text.encode()
        assert encoded[header["start_byte"] : header["end_byte"]] == b"Name | Value"
    assert all("table_header" not in c.metadata for c in chunks if c not in in_table)


def test_markdown_tables_carry_their_header_too() -> None:
    rows = "".join(f"| row {n} | {n * n} |\n" for n in range(40))
    text = f"# Squares\n\nIntro.\n\n| n | n² |\n|---|---|\n{rows}\nAfter the table.\n"
    chunks = MarkdownChunker(chunk_size=120).chunk(text)
    check_chunks(text, chunks, recursive_levels(120), "char")
    in_table = [c for c in chunks if "| row" in c.text]
    assert len(in_table) > 3
    for chunk in in_table:
        assert chunk.metadata["table_header"]["text"] == "| n | n² |"
        assert all(line.startswith("|") for line in chunk.text.splitlines() if "row" in line)
        assert chunk.text.rstrip().endswith("|")
    assert "table_header" not in chunks[-1].metadata


def test_several_megabyte_page() -> None:
    rows = "".join(f"<tr><td>row {n}</td><td>{n * n}</td></tr>" for n in range(40_000))
    paragraphs = "".join(f"<h2>Part {n}</h2><p>{'word ' * 200}</p>" for n in range(2_000))
    page = f"<main><h1>Big</h1><table>{rows}</table>{paragraphs}</main>"
    assert len(page) > 3_000_000
    chunker = ParentChildChunker(2000, 400, parent_chunker="html")
    text = chunker.parent_chunker.read(page).text  # type: ignore[union-attr]
    tree = chunker.chunk_tree(page)
    check_chunks(text, tree, parent_child_levels(2000, 400), "char")
    rows_cut = [c.text for c in tree if c.level == 1 and c.text.startswith("row")]
    assert rows_cut and all(text.count("\n") + 1 for text in rows_cut)


# ----------------------------------------------------------------------- hypothesis pages

TAGS = ["p", "div", "b", "i", "a", "h1", "h2", "h3", "li", "ul", "table", "tr", "td", "pre",
        "span", "br", "script", "main", "article", "code", "em"]  # fmt: skip
piece = st.one_of(
    st.sampled_from([f"<{tag}>" for tag in TAGS] + [f"</{tag}>" for tag in TAGS]),
    st.sampled_from(["&amp;", "&lt;", "&nbsp;", "&#169;", "&bogus;", "&", "\r\n", "\n\n", "  "]),
    st.text(min_size=1, max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(piece, max_size=60), st.sampled_from(["main", "body"]))
def test_any_markup_keeps_the_contract(pieces: list[str], content: str) -> None:
    page = "".join(pieces)
    chunker = ParentChildChunker(60, 20, parent_chunker=HtmlChunker(60, content=content))  # type: ignore[arg-type]
    text = HtmlChunker(content=content).read(page).text  # type: ignore[arg-type]
    tree = chunker.chunk_tree(page)
    check_chunks(text, tree, parent_child_levels(60, 20), "char")
    size = len(page.encode("utf-8", "surrogatepass"))
    for chunk in tree:
        start, end = chunk.metadata["source_start_byte"], chunk.metadata["source_end_byte"]
        assert 0 <= start <= end <= size


# ------------------------------------------------------------------ the Rust documentation


def test_readable_text_matches_the_reference_extractor() -> None:
    """No lost, added or reordered words against html5lib, page by page."""
    chunker = HtmlChunker()
    failures = {}
    pages = sample_pages(every=200)
    for path in pages:
        source = path.read_text(encoding="utf-8")
        found = differences(reference_words(source), spanchunk_words(chunker.read(source).text))
        if found:
            failures[str(path)] = {kind: items[:5] for kind, items in found.items()}
    assert not failures, f"{len(failures)} of {len(pages)} pages differ: {failures}"


def test_contract_over_the_rust_documentation() -> None:
    chunker = ParentChildChunker(2000, 400, parent_chunker="html")
    reader = HtmlChunker()
    spec = parent_child_levels(2000, 400)
    with_heading = 0
    parents = 0
    for path in sample_pages(every=50):
        source = path.read_text(encoding="utf-8")
        text = reader.read(source).text
        tree = chunker.chunk_tree(source)
        check_chunks(text, tree, spec, "char")
        encoded = len(source.encode())
        for chunk in tree:
            assert 0 <= chunk.metadata["source_start_byte"] <= chunk.metadata["source_end_byte"]
            assert chunk.metadata["source_end_byte"] <= encoded
            if chunk.level == 1:
                parents += 1
                with_heading += bool(chunk.metadata["headings"])
    assert parents > 1000 and with_heading > parents // 2


def test_html_levels_alone_keep_the_contract() -> None:
    page = (rust_docs() / "book" / "ch04-01-what-is-ownership.html").read_text(encoding="utf-8")
    chunker = HtmlChunker(chunk_size=500)
    text = chunker.read(page).text
    check_chunks(text, chunker.chunk(page), recursive_levels(500), "char")
    assert chunker.chunk(page)[0].metadata["headings"] == ("What Is Ownership?",)


def test_settings_that_cannot_work_are_refused() -> None:
    with pytest.raises(ValueError, match=r"'main'.*'body'"):
        HtmlChunker(content="all")  # type: ignore[arg-type]
    assert "content='body'" in repr(HtmlChunker(content="body"))
    assert HtmlChunker(content="body").fingerprint() != HtmlChunker().fingerprint()


def test_html_levels_are_refused_beside_levels_cut_in_python() -> None:
    from spanchunk import Chunker, HierarchicalChunker  # noqa: PLC0415

    class Lines(Chunker):
        def split_text(self, text: str) -> list[str]:
            return text.splitlines()

    page = "<h1>A</h1><p>one</p><p>two</p>"
    mixed = ParentChildChunker(200, 50, parent_chunker="html", child_chunker=Lines())
    with pytest.raises(ValueError, match=r"HtmlChunker\(\)\.read\(page\)"):
        mixed.chunk(page)
    nested = HierarchicalChunker(
        [500], chunkers=[ParentChildChunker(200, 50, parent_chunker="html")]
    )
    with pytest.raises(ValueError, match="readable text"):
        nested.chunk(page)
    # What the message says to do works.
    text = HtmlChunker().read(page)
    assert [c.text for c in ParentChildChunker(200, 50, child_chunker=Lines()).chunk(text)] == [
        "A",
        "one",
        "two",
    ]


def test_a_heading_starts_the_chunk_of_what_follows_it() -> None:
    page = (
        "<html><body><main><h1>Changes</h1><h3>Added</h3><ul><li>one item</li>"
        "<li>two items</li><li>three items</li></ul></main></body></html>"
    )
    # The sub-section fits alone, not after "Changes": its list is cut between items so
    # that both headings start the chunk of its first items.
    chunks = [chunk.text for chunk in HtmlChunker(chunk_size=40).chunk(page)]
    assert chunks == ["Changes\n\nAdded\n\none item\ntwo items", "three items"]
