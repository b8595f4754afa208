"""The contract over records the command line wrote for HTML pages (JSON Lines), page by page:
what ``tests/test_html_tree.py`` checks over a whole documentation tree, and
``benches/html_tree.py`` with its timings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from spanchunk import Document


def whitespace_mask(text: str) -> np.ndarray:
    """True for each char of ``text`` that is white space (``str.isspace``)."""
    points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    mask = np.zeros(len(points), dtype=bool)
    for char in {char for char in set(text) if char.isspace()}:
        mask |= points == ord(char)
    return mask


def check_page(
    source: Path,
    records: list[dict[str, object]],
    read: Callable[[str], Document],
    sizes: dict[int, int],
) -> list[str]:
    """The contract's violations of one page's JSON Lines records (``sizes``: the largest
    chunk of each level, in chars): each record's text is the page's readable text (``read``)
    at its char span and at its byte span, no chunk is larger than its level's size or blank,
    every char that is not white space lies in a chunk of each level, children lie inside
    their parents, and the span in the page's source lies inside the page's bytes."""
    page = source.read_text(encoding="utf-8")
    text = read(page).text
    encoded = text.encode("utf-8")
    size = len(page.encode("utf-8"))
    problems = []
    by_id = {record["id"]: record for record in records}
    blank = whitespace_mask(text)
    for level in sorted(sizes, reverse=True):
        covered = np.zeros(len(text) + 1, dtype=np.int64)
        for record in records:
            if record["level"] != level:
                continue
            start, end = int(record["start_char"]), int(record["end_char"])  # type: ignore[call-overload]
            chunk = str(record["text"])
            if text[start:end] != chunk:
                problems.append(f"{source}: text differs at chars {start}:{end}")
            if encoded[int(record["start_byte"]) : int(record["end_byte"])] != chunk.encode():  # type: ignore[call-overload]
                problems.append(f"{source}: bytes differ at chars {start}:{end}")
            if len(chunk) > sizes[level] or not chunk.strip():
                problems.append(f"{source}: a chunk of {len(chunk)} chars at level {level}")
            first, last = record["source_start_byte"], record["source_end_byte"]
            if not 0 <= first <= last <= size:  # type: ignore[operator]
                problems.append(f"{source}: source span {first}:{last} outside {size} bytes")
            parent = record["parent_id"]
            if level == 0:
                above = by_id.get(parent)
                if above is None or not (
                    int(above["start_char"]) <= start and end <= int(above["end_char"])  # type: ignore[call-overload]
                ):
                    problems.append(f"{source}: a child outside its parent at {start}:{end}")
            covered[start] += 1
            covered[end] -= 1
        inside = np.cumsum(covered)[: len(text)] > 0
        missed = ~(inside | blank)
        if missed.any():
            position = int(np.argmax(missed))
            problems.append(f"{source}: char {position} of level {level} in no chunk")
    return problems
