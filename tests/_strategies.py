# ruff: noqa: RUF001 - CJK full-width punctuation is the point of these strings
"""Hypothesis strategies: hostile Unicode text and arbitrary valid chunker settings."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # ZWJ sequence, 7 cps
RAINBOW_FLAG = "\U0001f3f3\ufe0f\u200d\U0001f308"
E_ACUTE = "e\u0301"  # a combining mark: one grapheme, two code points
KSSA = "\u0915\u094d\u0937"  # Devanagari conjunct: one grapheme, three code points

FRAGMENTS = [
    FAMILY,
    RAINBOW_FLAG,
    E_ACUTE,
    KSSA,
    "\U0001f44d\U0001f3fd",
    "\U0001f1eb\U0001f1f7",
    "漢字",
    "你好。",
    "世界，",
    "我们！",
    "吗？",
    "、",
    "；",
    "「引用」",
    "\u3000",
    "\r\n",
    "\r\n\r\n",
    "\n",
    "\n\n",
    "\n\n\n",
    "\r",
    "\x00",
    "\t",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x1f",
    "\u0085",
    "\u2028",
    "\u2029",
    "\u00a0",
    "\u200b",
    "\ufeff",
    " ",
    "  ",
    ". ",
    "! ",
    "? ",
    "; ",
    ", ",
    ".",
    "a",
    "I",
    "word",
    "Hello",
    "é",
    "ß",
    "Ωμέγα",
    "ﬁ",
    "\U00010348",
    "|",
]

_word_chars = st.sampled_from(["a", "é", "漢", "\U0001f44d", E_ACUTE, "x", "Z", "9", "ß"])

#: A word with no separator in it for hundreds of characters.
long_words = st.builds(
    lambda char, count, tail: char * count + tail,
    _word_chars,
    st.integers(50, 400),
    st.text(alphabet="abcé漢\U0001f44d\u0301", max_size=30),
)

#: Text with no separator at all (no whitespace, no punctuation).
no_separator_text = st.text(
    alphabet=st.sampled_from(
        [
            "a",
            "b",
            "é",
            "漢",
            "字",
            "\U0001f44d",
            "\u0301",
            "\u200d",
            "\ufe0f",
            "\U0001f3fd",
            "\x00",
        ]
    ),
    min_size=1,
    max_size=600,
)

_pieces = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(FRAGMENTS),
    st.text(max_size=12),
    long_words,
    st.builds(lambda n: "lorem ipsum dolor. " * n, st.integers(1, 20)),
)

#: Hostile Unicode documents: the mix above, plain st.text(), and separator-free text.
texts = st.one_of(
    st.lists(_pieces, max_size=50).map("".join),
    st.lists(_pieces, max_size=50).map("".join),
    st.text(max_size=300),
    no_separator_text,
)

_separator_pool = [
    "\n\n",
    "\n",
    "\r\n",
    ". ",
    "。",
    " ",
    "\t",
    "|",
    ",",
    "ab",
    "é",
    E_ACUTE,
    "\u200d",
    FAMILY,
    "\u3000",
    "\x00",
    "lorem",
    "  ",
]
_separator = st.one_of(st.sampled_from(_separator_pool), st.text(min_size=1, max_size=3))
_separator_level = st.one_of(_separator, st.lists(_separator, min_size=1, max_size=3).map(list))
separators = st.one_of(st.none(), st.lists(_separator_level, min_size=1, max_size=5))


def _min_size(unit: str) -> int:
    return 1 if unit == "char" else 4


@st.composite
def recursive_settings(draw: Any, unit: str | None = None) -> dict[str, Any]:
    """Keyword arguments for RecursiveChunker: any valid combination."""
    unit = unit or draw(st.sampled_from(["char", "byte"]))
    size = draw(st.one_of(st.integers(_min_size(unit), 12), st.integers(_min_size(unit), 300)))
    return {
        "chunk_size": size,
        "overlap": draw(st.one_of(st.just(0), st.integers(0, size - 1))),
        "min_chunk_size": draw(st.one_of(st.just(0), st.integers(0, size))),
        "separators": draw(separators),
        "keep_separator": draw(st.sampled_from(["end", "start", False])),
        "trim": draw(st.booleans()),
        "unit": unit,
        "merge": draw(st.sampled_from(["boundary", "greedy"])),
    }


@st.composite
def parent_child_settings(draw: Any) -> dict[str, Any]:
    """Keyword arguments for ParentChildChunker (sizes, overlap, unit)."""
    unit = draw(st.sampled_from(["char", "byte"]))
    child = draw(st.one_of(st.integers(_min_size(unit), 10), st.integers(_min_size(unit), 200)))
    parent = draw(st.integers(child + 1, child * 6 + 10))
    return {
        "parent_size": parent,
        "child_size": child,
        "child_overlap": draw(st.one_of(st.just(0), st.integers(0, child - 1))),
        "unit": unit,
    }


@st.composite
def hierarchical_settings(draw: Any, overlap: bool = False) -> dict[str, Any]:
    """Keyword arguments for a 3-level HierarchicalChunker (overlap 0, or > 0 if asked)."""
    unit = draw(st.sampled_from(["char", "byte"]))
    low = max(_min_size(unit), 2 if overlap else 1)
    leaf = draw(st.one_of(st.integers(low, 8), st.integers(low, 100)))
    middle = draw(st.integers(leaf + 1, leaf * 5 + 10))
    top = draw(st.integers(middle + 1, middle * 5 + 10))
    return {
        "sizes": [top, middle, leaf],
        "overlap": draw(st.integers(1, leaf - 1)) if overlap and leaf > 1 else 0,
        "unit": unit,
    }
