"""The chunking contract (docs/concepts.md, "The contract"), as one reusable checker.

Every test that produces chunks (hypothesis properties, the real corpus, hand-written cases)
runs them through :func:`check_chunker` (or the lower-level :func:`check_chunks` and
:func:`check_spans`). The checks are vectorised with numpy over the code points of the
document, so they stay linear on megabytes of text: no per-character Python loop, and only
one cheap Python step per chunk (slicing and comparing its text).

A *level spec* describes what the chunker was asked for, from the leaves up::

    {0: LevelSpec(size=400, overlap=0), 1: LevelSpec(size=2000, overlap=0)}

Level 0 is the leaves (what gets embedded); the highest level is the top, whose chunks have
no parent.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

SPAN_FIELDS = ("level", "index", "parent", "start_byte", "end_byte", "start_char", "end_char")
HEX16 = re.compile(r"[0-9a-f]{16}")


@dataclass(frozen=True)
class LevelSpec:
    """What one level was asked for: the largest size and the largest overlap, in the unit."""

    size: int
    overlap: int = 0


def recursive_levels(chunk_size: int, overlap: int = 0) -> dict[int, LevelSpec]:
    return {0: LevelSpec(chunk_size, overlap)}


def parent_child_levels(parent_size: int, child_size: int, child_overlap: int = 0) -> dict:
    return {1: LevelSpec(parent_size, 0), 0: LevelSpec(child_size, child_overlap)}


def hierarchical_levels(sizes: Sequence[int], overlap: int = 0) -> dict[int, LevelSpec]:
    """HierarchicalChunker's overlap is the leaves' (as ParentChildChunker's child_overlap):
    parent levels never overlap, their children would repeat."""
    top = len(sizes) - 1
    return {top - i: LevelSpec(size, overlap if i == top else 0) for i, size in enumerate(sizes)}


# The invisible format chars the contract counts as no content, like whitespace (README.md,
# "The contract"): written out here, not read from the core, so the checker stays independent.
INVISIBLE = [
    0x00AD,
    0x061C,
    0x180E,
    *range(0x200B, 0x2010),
    *range(0x202A, 0x202F),
    *range(0x2060, 0x2065),
    *range(0x2066, 0x2070),
    0xFEFF,
]


@functools.cache
def _whitespace_code_points() -> np.ndarray:
    """Every blank code point: those for which Python's str.isspace is true, and the
    invisible format chars (the contract's "no content")."""
    return np.array(
        sorted(
            [
                *(cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and chr(cp).isspace()),
                *INVISIBLE,
            ]
        ),
        dtype=np.uint32,
    )


class TextInfo:
    """Per-code-point facts about one document, computed once, in numpy.

    - ``byte_offset[i]``: UTF-8 byte offset of code point ``i`` (length ``n + 1``);
    - ``non_ws``: boolean mask of the characters that are not whitespace;
    - ``non_ws_prefix[i]``: how many non-whitespace characters lie before ``i``.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.encoded = text.encode("utf-8")
        code_points = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
        self.n = len(code_points)
        assert self.n == len(text)
        widths = (
            1
            + (code_points >= 0x80).astype(np.int64)
            + (code_points >= 0x800)
            + (code_points >= 0x10000)
        )
        self.byte_offset = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(widths, out=self.byte_offset[1:])
        assert self.byte_offset[-1] == len(self.encoded)
        self.non_ws = ~np.isin(code_points, _whitespace_code_points())
        self.non_ws_prefix = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(self.non_ws, out=self.non_ws_prefix[1:])

    def context(self, start: int, end: int | None = None, pad: int = 20) -> str:
        end = start + 1 if end is None else end
        return repr(self.text[max(0, start - pad) : end + pad])


@dataclass
class LevelArrays:
    """One level's chunks as parallel int64 arrays, in output order."""

    start_char: np.ndarray
    end_char: np.ndarray
    start_byte: np.ndarray
    end_byte: np.ndarray
    index: np.ndarray
    parent: np.ndarray  # row of the parent within the level above; -1 at the top

    def __len__(self) -> int:
        return len(self.start_char)


Unit = str | Callable[[str], int] | Mapping[int, "str | Callable[[str], int]"]
"""A level's unit: "char", "byte", "word", "sentence", "passage", "page", or a size function
(token units: the exact count of a text encoded on its own); a mapping gives each level its
own (mixed units)."""


_BLANK_LINE = re.compile(r"\n\n|\r\n\r\n")


def count_words(text: str) -> int:
    """Words: runs of non-whitespace, as ``str.split()`` finds them, that hold a visible char
    (an invisible one, such as a zero-width joiner, neither starts nor ends a word)."""
    invisible = _invisible_chars()
    return len("".join(char for char in text if char not in invisible).split())


@functools.cache
def _invisible_chars() -> frozenset[str]:
    from spanchunk import _core  # noqa: PLC0415

    return frozenset(char for char in _core.BLANK_CHARS if not char.isspace())


def _blank(piece: str) -> bool:
    """Only whitespace and invisible chars (``_core.BLANK_CHARS``): no content."""
    from spanchunk import _core  # noqa: PLC0415

    return not piece.strip(_core.BLANK_CHARS)


def count_passages(text: str) -> int:
    """Passages: non-blank pieces between "\\n\\n" or "\\r\\n\\r\\n"."""
    return sum(1 for piece in _BLANK_LINE.split(text) if not _blank(piece))


def count_pages(text: str) -> int:
    """Pages: non-blank pieces between form feeds."""
    return sum(1 for piece in text.split("\f") if not _blank(piece))


@functools.cache
def _sentence_counter() -> Callable[[str], int]:
    # No Python package here segments UAX #29 sentences: the core's own count of the text
    # alone (its pinned examples are in test_units.py), a pass apart from the chunking.
    from spanchunk import _core  # noqa: PLC0415

    return _core.Splitter(1, unit="sentence").measure


def count_sentences(text: str) -> int:
    """Sentences: UAX #29 sentences with content, lone line breaks read as spaces."""
    return _sentence_counter()(text)


SEGMENT_UNITS: dict[str, Callable[[str], int]] = {
    "word": count_words,
    "passage": count_passages,
    "page": count_pages,
    "sentence": count_sentences,
}
"""The units of Haystack's split_by, each as the count of a text on its own."""


def _measure(info: TextInfo, unit: str | Callable[[str], int], sc: Any, ec: Any) -> np.ndarray:
    """Sizes of the char spans ``sc[i]:ec[i]`` in ``unit``."""
    if unit == "char":
        return ec - sc
    if unit == "byte":
        return info.byte_offset[ec] - info.byte_offset[sc]
    if isinstance(unit, str):
        assert unit in SEGMENT_UNITS, f"unknown unit {unit!r}"
        unit = SEGMENT_UNITS[unit]
    assert callable(unit)
    return np.array(
        [unit(info.text[start:end]) for start, end in zip(sc.tolist(), ec.tolist(), strict=True)],
        dtype=np.int64,
    ).reshape(-1)


def _first_bad(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def check_level(
    info: TextInfo,
    arrays: LevelArrays,
    *,
    level: int,
    spec: LevelSpec,
    unit: str | Callable[[str], int],
    exactly_once: bool,
    coverage: bool = True,
) -> None:
    """Rules 1 (offsets), 2 (size), 3 (non-empty, order, index), 4 (coverage), 5 (overlap)."""
    sc, ec, sb, eb = arrays.start_char, arrays.end_char, arrays.start_byte, arrays.end_byte
    n = len(arrays)
    where = f"level {level}"

    # Rule 1: spans inside the document, byte and char spans describe the same text.
    if n:
        assert sc.min() >= 0 and ec.max() <= info.n, f"{where}: char span out of the document"
    bad = ec <= sc
    assert not bad.any(), f"{where}: empty chunk at row {_first_bad(bad)}"
    bad = info.byte_offset[sc] != sb
    assert not bad.any(), (
        f"{where}: start_byte of row {_first_bad(bad)} is {sb[_first_bad(bad)]}, "
        f"the char offset says {info.byte_offset[sc][_first_bad(bad)]}"
    )
    bad = info.byte_offset[ec] != eb
    assert not bad.any(), (
        f"{where}: end_byte of row {_first_bad(bad)} is {eb[_first_bad(bad)]}, "
        f"the char offset says {info.byte_offset[ec][_first_bad(bad)]}"
    )

    # Rule 2: strict size in the unit.
    sizes = _measure(info, unit, sc, ec)
    bad = sizes > spec.size
    if bad.any():
        row = _first_bad(bad)
        raise AssertionError(
            f"{where}: row {row} has size {sizes[row]} {unit}s > {spec.size}: "
            f"{info.context(int(sc[row]), int(ec[row]), 0)}"
        )

    # Rule 3: not whitespace-only, strictly increasing starts, index 0, 1, 2, ...
    bad = (info.non_ws_prefix[ec] - info.non_ws_prefix[sc]) == 0
    if bad.any():
        row = _first_bad(bad)
        raise AssertionError(
            f"{where}: row {row} is whitespace-only: {info.context(int(sc[row]), int(ec[row]), 0)}"
        )
    bad = np.diff(sc) <= 0
    assert not bad.any(), (
        f"{where}: start_char not strictly increasing at row {_first_bad(bad) + 1}"
    )
    bad = arrays.index != np.arange(n)
    assert not bad.any(), (
        f"{where}: index of row {_first_bad(bad)} is {arrays.index[_first_bad(bad)]}"
    )

    # Rule 4: coverage of every non-whitespace character (exactly once without overlap).
    count = np.cumsum(
        np.bincount(sc, minlength=info.n + 1) - np.bincount(ec, minlength=info.n + 1)
    )[: info.n]
    bad = info.non_ws & (count < 1) if coverage else np.zeros(0, dtype=bool)
    if bad.any():
        pos = _first_bad(bad)
        raise AssertionError(f"{where}: char {pos} is in no chunk: {info.context(pos)}")
    if exactly_once:
        bad = info.non_ws & (count > 1)
        if bad.any():
            pos = _first_bad(bad)
            raise AssertionError(
                f"{where}: char {pos} is in {count[pos]} chunks although overlap is 0: "
                f"{info.context(pos)}"
            )

    # Rule 5: overlap of consecutive chunks, in the unit.
    if n > 1:
        # Where two chunks do not share text, the overlap is 0 in any unit.
        shared = np.where(
            ec[:-1] > sc[1:], _measure(info, unit, sc[1:], np.maximum(ec[:-1], sc[1:])), 0
        )
        bad = shared > spec.overlap
        if bad.any():
            row = _first_bad(bad)
            raise AssertionError(
                f"{where}: rows {row} and {row + 1} overlap by {shared[row]} {unit}s "
                f"> {spec.overlap}"
            )


def check_tree_arrays(
    info: TextInfo,
    levels: Mapping[int, LevelArrays],
    spec: Mapping[int, LevelSpec],
    unit: Unit,
    *,
    coverage: bool = True,
) -> None:
    """Every level through :func:`check_level`, then rule 6 (hierarchy) between levels."""
    assert sorted(levels) == sorted(spec), (
        f"levels present {sorted(levels)}, expected {sorted(spec)}"
    )
    top = max(spec)
    for level in sorted(spec, reverse=True):
        exactly_once = all(spec[above].overlap == 0 for above in spec if above >= level)
        check_level(
            info,
            levels[level],
            level=level,
            spec=spec[level],
            unit=unit[level] if isinstance(unit, Mapping) else unit,
            exactly_once=exactly_once,
            coverage=coverage,
        )
    if info.non_ws.any():
        for level in spec:
            assert len(levels[level]), f"level {level} is empty for a non-blank text"
    assert (levels[top].parent == -1).all(), "top-level chunks must have no parent"
    for level in range(top):
        child, parent = levels[level], levels[level + 1]
        p = child.parent
        assert ((p >= 0) & (p < len(parent))).all(), f"level {level}: parent row out of range"
        bad = (child.start_char < parent.start_char[p]) | (child.end_char > parent.end_char[p])
        if bad.any():
            row = _first_bad(bad)
            raise AssertionError(
                f"level {level}: row {row} [{child.start_char[row]}, {child.end_char[row]}) "
                f"is outside its parent [{parent.start_char[p[row]]}, {parent.end_char[p[row]]})"
            )
        has_child = np.zeros(len(parent), dtype=bool)
        has_child[p] = True
        assert has_child.all(), f"level {level + 1}: row {_first_bad(~has_child)} has no child"
        assert (np.diff(p) >= 0).all(), f"level {level}: children not grouped by parent in order"


def _arrays_from_chunks(chunks: Sequence[Any], parent_rows: np.ndarray) -> LevelArrays:
    return LevelArrays(
        start_char=np.array([c.start_char for c in chunks], dtype=np.int64),
        end_char=np.array([c.end_char for c in chunks], dtype=np.int64),
        start_byte=np.array([c.start_byte for c in chunks], dtype=np.int64),
        end_byte=np.array([c.end_byte for c in chunks], dtype=np.int64),
        index=np.array([c.index for c in chunks], dtype=np.int64),
        parent=parent_rows,
    )


def group_levels(chunks: Sequence[Any]) -> dict[int, list[Any]]:
    """Chunks by level, in output order; also asserts the output lists higher levels first."""
    grouped: dict[int, list[Any]] = {}
    previous = None
    for c in chunks:
        if previous is not None:
            assert c.level <= previous, "chunk_tree must list parents (higher levels) first"
        previous = c.level
        grouped.setdefault(c.level, []).append(c)
    return grouped


def check_chunks(
    text: str,
    chunks: Sequence[Any],
    spec: Mapping[int, LevelSpec],
    unit: Unit,
    *,
    document_id: str | None = None,
    info: TextInfo | None = None,
    coverage: bool = True,
) -> dict[int, list[Any]]:
    """The whole contract on ``Chunk`` objects of one document (all levels, parents first).

    Returns the chunks grouped by level.
    """
    info = info or TextInfo(text)
    grouped = group_levels(chunks)
    if not info.non_ws.any():
        assert chunks == [] or len(chunks) == 0, "a blank text gives no chunks"
        return {}
    ids = [c.id for c in chunks]
    for c in chunks:
        assert isinstance(c.id, str) and HEX16.fullmatch(c.id), f"bad chunk id {c.id!r}"
    assert len(set(ids)) == len(ids), "chunk ids must be unique within a document"
    doc_ids = {c.document_id for c in chunks}
    assert len(doc_ids) == 1, f"one document, several document ids: {doc_ids}"
    if document_id is not None:
        assert doc_ids == {document_id}
    by_id = {c.id: c for c in chunks}
    top = max(spec)
    arrays: dict[int, LevelArrays] = {}
    for level, level_chunks in grouped.items():
        rows = {c.id: row for row, c in enumerate(level_chunks)}
        parent_rows = np.full(len(level_chunks), -1, dtype=np.int64)
        above = {c.id: row for row, c in enumerate(grouped.get(level + 1, []))}
        for row, c in enumerate(level_chunks):
            assert isinstance(c.id, str) and HEX16.fullmatch(c.id), f"bad chunk id {c.id!r}"
            assert c.text == text[c.start_char : c.end_char], (
                f"level {level} row {row}: text differs from text[{c.start_char}:{c.end_char}]"
            )
            assert info.encoded[c.start_byte : c.end_byte] == c.text.encode("utf-8"), (
                f"level {level} row {row}: bytes differ from text.encode()"
                f"[{c.start_byte}:{c.end_byte}]"
            )
            assert c.content == c.text, f"level {level} row {row}: content differs from text"
            assert isinstance(c.child_ids, tuple)
            if level == top:
                assert c.parent_id is None, f"top level chunk {row} has parent_id {c.parent_id}"
            else:
                assert c.parent_id in above, f"level {level} row {row}: parent_id does not resolve"
                parent_rows[row] = above[c.parent_id]
                assert c.id in by_id[c.parent_id].child_ids, "child missing from child_ids"
            if level == 0:
                assert c.child_ids == (), "leaves have no child_ids"
            else:
                unknown = [i for i in c.child_ids if i not in by_id]
                assert not unknown, f"level {level} row {row}: child_ids names unknown {unknown}"
                children = [by_id[i] for i in c.child_ids]
                assert all(k.level == level - 1 for k in children)
                assert all(k.parent_id == c.id for k in children), "child_ids / parent_id mismatch"
                assert [k.start_char for k in children] == sorted(k.start_char for k in children), (
                    f"level {level} row {row}: child_ids not in increasing order"
                )
        assert len(rows) == len(level_chunks)
        arrays[level] = _arrays_from_chunks(level_chunks, parent_rows)
    check_tree_arrays(info, arrays, spec, unit, coverage=coverage)
    # child_ids lists exactly the children whose parent_id points back.
    for level in range(top):
        counts: dict[str, int] = {}
        for c in grouped[level]:
            counts[c.parent_id] = counts.get(c.parent_id, 0) + 1
        for p in grouped[level + 1]:
            assert len(p.child_ids) == counts.get(p.id, 0), "child_ids has extra or missing ids"
    return grouped


def spans_to_levels(spans: np.ndarray) -> dict[int, LevelArrays]:
    """A ``spans()`` structured array to per-level arrays (rows: top level first)."""
    assert spans.dtype.names == SPAN_FIELDS, f"spans fields are {spans.dtype.names}"
    level = spans["level"].astype(np.int64)
    if len(level):
        assert (np.diff(level) <= 0).all(), "spans rows must list higher levels first"
    out = {}
    for value in np.unique(level):
        rows = spans[level == value]
        out[int(value)] = LevelArrays(
            start_char=rows["start_char"].astype(np.int64),
            end_char=rows["end_char"].astype(np.int64),
            start_byte=rows["start_byte"].astype(np.int64),
            end_byte=rows["end_byte"].astype(np.int64),
            index=rows["index"].astype(np.int64),
            parent=rows["parent"].astype(np.int64),
        )
    return out


def check_spans(
    text: str,
    spans: np.ndarray,
    spec: Mapping[int, LevelSpec],
    unit: Unit,
    *,
    info: TextInfo | None = None,
    coverage: bool = True,
) -> dict[int, LevelArrays]:
    """The whole contract on a ``spans()`` array."""
    info = info or TextInfo(text)
    levels = spans_to_levels(spans)
    if not info.non_ws.any():
        assert len(spans) == 0, "a blank text gives no spans"
        return levels
    check_tree_arrays(info, levels, spec, unit, coverage=coverage)
    return levels


def tree_of(chunker: Any, document: Any) -> list[Any]:
    """All levels of ``chunker`` for one document, parents first."""
    if hasattr(chunker, "chunk_tree"):
        return chunker.chunk_tree(document)
    return chunker.chunk(document)


def check_chunker(
    chunker: Any,
    text: str,
    spec: Mapping[int, LevelSpec],
    unit: Unit,
    *,
    info: TextInfo | None = None,
) -> list[Any]:
    """Run ``chunker`` on ``text`` every way (chunk_tree, chunk, spans) and check all of it.

    Also checks that the three agree: ``chunk`` returns the leaves of ``chunk_tree``, and
    ``spans`` has the same rows as ``chunk_tree`` in the same order. Returns the tree.
    """
    info = info or TextInfo(text)
    tree = tree_of(chunker, text)
    check_chunks(text, tree, spec, unit, info=info)
    leaves = chunker.chunk(text)
    assert [c.id for c in leaves] == [c.id for c in tree if c.level == 0]
    assert all(c.level == 0 for c in leaves)
    spans = chunker.spans(text)
    check_spans(text, spans, spec, unit, info=info)
    fields = ("level", "index", "start_byte", "end_byte", "start_char", "end_char")
    from_tree = np.array([[getattr(c, f) for f in fields] for c in tree], dtype=np.int64).reshape(
        -1, len(fields)
    )
    from_spans = np.column_stack([spans[f].astype(np.int64) for f in fields]).reshape(
        -1, len(fields)
    )
    assert from_spans.shape == from_tree.shape and (from_spans == from_tree).all(), (
        "spans() and chunk_tree() disagree"
    )
    return tree


def chunk_record(c: Any) -> tuple:
    """Every public field of a Chunk, for equality between runs, processes and pickles."""
    return (
        c.id,
        c.text,
        c.document_id,
        c.index,
        c.level,
        c.start_char,
        c.end_char,
        c.start_byte,
        c.end_byte,
        c.parent_id,
        tuple(c.child_ids),
        dict(c.metadata),
    )


def check_merging(
    text: str,
    levels: Mapping[int, LevelArrays],
    spec: Mapping[int, LevelSpec],
    unit: Unit,
    *,
    trim: bool | Mapping[int, bool] = True,
    merge: str | Mapping[int, str] = "boundary",
    info: TextInfo | None = None,
) -> None:
    """What the README's rules of cutting add to the contract for the built-in engine.

    - trim=True: no chunk starts or ends with whitespace.
    - merge="greedy": without overlap, two consecutive chunks of one parent never fit
      together (the first atom of the second chunk did not fit after the first chunk, and the
      second chunk contains that atom, so their union cannot fit either). Under
      merge="boundary" they may (a chunk ends at the coarsest cut, leaving room unused); that
      rule needs the separator levels and is checked in test_boundaries.py.
    """
    info = info or TextInfo(text)
    for level, arrays in levels.items():
        level_trim = trim if isinstance(trim, bool) else trim[level]
        level_merge = merge if isinstance(merge, str) else merge[level]
        sc, ec = arrays.start_char, arrays.end_char
        if level_trim and len(sc):
            bad = ~info.non_ws[sc] | ~info.non_ws[ec - 1]
            if bad.any():
                row = _first_bad(bad)
                raise AssertionError(
                    f"level {level}: trim is on but row {row} has whitespace at an edge: "
                    f"{info.context(int(sc[row]), int(ec[row]), 0)}"
                )
        if spec[level].overlap or len(sc) < 2 or level_merge != "greedy":
            continue
        same_parent = arrays.parent[:-1] == arrays.parent[1:]
        starts, ends = (sc, ec) if unit == "char" else (arrays.start_byte, arrays.end_byte)
        union = ends[1:] - starts[:-1]
        bad = same_parent & (union <= spec[level].size)
        if bad.any():
            row = _first_bad(bad)
            raise AssertionError(
                f"level {level}: rows {row} and {row + 1} fit together ({union[row]} {unit}s "
                f"<= {spec[level].size}) but were not merged: "
                f"{info.context(int(sc[row]), int(ec[row + 1]), 0)}"
            )
