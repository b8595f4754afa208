"""Lists as tables are: a list item that fits is never cut, so no chunk starts or ends inside
it; a list too large for a chunk is cut between its items, in Markdown and HTML pages, with
either merge."""

from __future__ import annotations

import html

from hypothesis import given, settings
from hypothesis import strategies as st
from spanchunk import HtmlChunker, MarkdownChunker

WORDS = st.lists(
    st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=9), min_size=1, max_size=14
)


def inside(spans: list[tuple[int, int]], position: int) -> bool:
    return any(start < position < end for start, end in spans)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.tuples(WORDS, WORDS), min_size=1, max_size=12),
    size=st.integers(40, 300),
    merge=st.sampled_from(["boundary", "greedy"]),
)
def test_markdown_items_that_fit_are_never_cut(
    items: list[tuple[list[str], list[str]]], size: int, merge: str
) -> None:
    # Items of two lines each (a lazy continuation), between two paragraphs.
    texts = [f"- {' '.join(first)}\n  {' '.join(second)}" for first, second in items]
    text = "Before the list.\n\n" + "\n".join(texts) + "\n\nAfter the list."
    spans, at = [], len("Before the list.\n\n")
    for item in texts:
        spans.append((at, at + len(item)))
        at += len(item) + 1
    fitting = [(start, end) for start, end in spans if end - start <= size]
    for chunk in MarkdownChunker(size, merge=merge).chunk(text):  # type: ignore[arg-type]
        assert not inside(fitting, chunk.start_char), (chunk.text, fitting)
        assert not inside(fitting, chunk.end_char), (chunk.text, fitting)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(WORDS, min_size=1, max_size=12),
    size=st.integers(40, 300),
    merge=st.sampled_from(["boundary", "greedy"]),
    ordered=st.booleans(),
)
def test_html_items_that_fit_are_never_cut(
    items: list[list[str]], size: int, merge: str, ordered: bool
) -> None:
    tag = "ol" if ordered else "ul"
    body = "".join(f"<li>{html.escape(' '.join(words))}</li>\n" for words in items)
    page = f"<main><h1>Title</h1><p>Before.</p><{tag}>{body}</{tag}><p>After.</p></main>"
    chunker = HtmlChunker(size, merge=merge)  # type: ignore[arg-type]
    text = chunker.read(page).text
    spans, at = [], 0
    for words in items:
        item = " ".join(words)
        start = text.index(item, at)
        spans.append((start, start + len(item)))
        at = start + len(item)
    fitting = [(start, end) for start, end in spans if end - start <= size]
    for chunk in chunker.chunk(page):
        assert not inside(fitting, chunk.start_char), (chunk.text, fitting)
        assert not inside(fitting, chunk.end_char), (chunk.text, fitting)


def test_a_list_too_large_is_cut_between_items() -> None:
    items = [
        f"- Item {n}: a list item with a fairly long text.\n  And a second line." for n in range(6)
    ]
    text = "\n".join(items)
    chunks = MarkdownChunker(150).chunk(text)
    assert [chunk.text for chunk in chunks] == [
        "\n".join(items[0:2]),
        "\n".join(items[2:4]),
        "\n".join(items[4:6]),
    ]
    texts = [f"Item {n}: a list item with a fairly long text." for n in range(6)]
    page = "<ul>" + "".join(f"<li>{item}</li>" for item in texts) + "</ul>"
    chunks = HtmlChunker(100).chunk(page)
    assert [chunk.text for chunk in chunks] == [
        "\n".join(texts[0:2]),
        "\n".join(texts[2:4]),
        "\n".join(texts[4:6]),
    ]
