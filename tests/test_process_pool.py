"""Many files in a process pool give exactly what one process gives (README, "Batch and
parallel"): the same children, ids, spans and texts in the same order, and one registry that
holds every parent exactly once.

The pool starts its workers with "spawn" (the default on macOS and Windows, and the strictest:
the worker must be importable, nothing is inherited) and, where the platform has it, "fork".
"""

from __future__ import annotations

import doctest
import multiprocessing
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import spanchunk.batch
from _contract import chunk_record
from spanchunk import Chunk, HierarchicalChunker, ParentChildChunker, RecursiveChunker
from spanchunk.batch import chunk_file, read_document

TEXTS = [
    "Plain prose. " * 400,
    "\ufeffA byte order mark, then CRLF lines.\r\n" * 150,
    "# A heading\n\nSome *Markdown* with `code`.\n\n- a list item\n- another one\n\n" * 60,
    "漢字かな交じり文。句読点もある、けれど空白はない。" * 120,
    "Emoji \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 and combining e\u0301 marks. "
    * 150,
    "short",
    "",
    "x" * 5000,
]


@pytest.fixture
def paths(tmp_path: Path) -> list[Path]:
    files = []
    for number, text in enumerate(TEXTS):
        path = tmp_path / f"doc{number:02}.txt"
        path.write_bytes(text.encode("utf-8"))  # bytes: CRLF and the BOM stay as they are
        files.append(path)
    return files


def serial(chunker: Any, paths: list[Path]) -> tuple[list[Chunk], list[Chunk]]:
    """(leaves, every chunk of every level) chunking the files one by one in this process."""
    leaves = [chunk for path in paths for chunk in chunker.chunk(read_document(path))]
    trees = [chunk for path in paths for chunk in chunk_file(chunker, path)]
    return leaves, trees


def in_pool(chunker: Any, paths: list[Path], method: str) -> tuple[list[Chunk], list[Chunk]]:
    """The README recipe: (leaves, every chunk) from a pool of 2 workers; parents merged."""
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        trees = list(pool.map(partial(chunk_file, chunker), paths, chunksize=2))
    leaves: list[Chunk] = []
    for tree in trees:
        chunker.parents.add(chunk for chunk in tree if chunk.level > 0)
        leaves.extend(chunk for chunk in tree if chunk.level == 0)
    return leaves, [chunk for tree in trees for chunk in tree]


def start_methods() -> list[str]:
    available = multiprocessing.get_all_start_methods()
    return [method for method in ("spawn", "fork") if method in available]


@pytest.mark.parametrize("method", start_methods())
# Python 3.12+ warns when forking a process that runs threads (the core's thread pool may).
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_pool_equals_serial_with_one_registry(paths: list[Path], method: str) -> None:
    serial_chunker = ParentChildChunker(parent_size=600, child_size=120)
    expected_leaves, expected_trees = serial(serial_chunker, paths)

    chunker = ParentChildChunker(parent_size=600, child_size=120)
    leaves, trees = in_pool(chunker, paths, method)

    assert [chunk_record(c) for c in leaves] == [chunk_record(c) for c in expected_leaves]
    assert [chunk_record(c) for c in trees] == [chunk_record(c) for c in expected_trees]
    assert [c.metadata["source"] for c in leaves] == [c.metadata["source"] for c in expected_leaves]

    # Every parent exactly once: each appears once in the workers' output and once in the
    # merged registry, which equals the registry of the serial run.
    parents = [c for c in trees if c.level > 0]
    assert parents, "the test files must give parents"
    assert max(Counter(c.id for c in parents).values()) == 1
    assert len(chunker.parents) == len(parents) == len(serial_chunker.parents)
    assert sorted(chunk_record(c) for c in chunker.parents) == sorted(
        chunk_record(c) for c in serial_chunker.parents
    )
    for leaf in leaves:
        parent = chunker.parent_of(leaf)
        assert parent is not None and leaf.id in parent.child_ids
        assert parent.start_char <= leaf.start_char < leaf.end_char <= parent.end_char


def test_pool_with_three_levels_and_one_level(paths: list[Path]) -> None:
    tree_chunker = HierarchicalChunker(sizes=[900, 300, 80], overlap=10)
    _, expected = serial(HierarchicalChunker(sizes=[900, 300, 80], overlap=10), paths)
    _, trees = in_pool(tree_chunker, paths, "spawn")
    assert [chunk_record(c) for c in trees] == [chunk_record(c) for c in expected]
    assert len(tree_chunker.parents) == sum(1 for c in expected if c.level > 0)

    flat = RecursiveChunker(chunk_size=100, overlap=20)
    expected_flat = [c for path in paths for c in flat.chunk(read_document(path))]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        flat_chunks = [c for tree in pool.map(partial(chunk_file, flat), paths) for c in tree]
    assert [chunk_record(c) for c in flat_chunks] == [chunk_record(c) for c in expected_flat]


def test_read_document_keeps_the_file_text(paths: list[Path]) -> None:
    for path, text in zip(paths, TEXTS, strict=True):
        document = read_document(path)
        assert document.text == text
        assert document.source == str(path)


def test_read_document_refuses_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"fine, then \xff")
    with pytest.raises(ValueError, match=r"not UTF-8 \(byte 0xff at offset 11\)"):
        read_document(path)
    with pytest.raises(FileNotFoundError):
        chunk_file(RecursiveChunker(), tmp_path / "missing.txt")


def test_batch_docstring_examples() -> None:
    failures, tried = doctest.testmod(spanchunk.batch, optionflags=doctest.ELLIPSIS)
    assert tried and not failures
