# ruff: noqa: RUF001 - CJK full-width punctuation is the point of these strings
"""Everything is picklable, settings are JSON, and ids/fingerprints are the same in any process."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import pickle
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from _contract import chunk_record
from spanchunk import (
    Chunker,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    ParentRegistry,
    RecursiveChunker,
)

REPO_ROOT = Path(__file__).resolve().parent.parent
TEXT = (
    "\ufeffTitle\r\n\r\nFirst paragraph, with a clause; and a sentence. Another one! "
    "漢字かな交じり文。中文，標點！\n\n"
    "Emoji \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 and e\u0301 marks. "
) * 6


class PipeChunker(Chunker):
    """A custom strategy at module level (so it pickles by reference)."""

    def split_text(self, text: str) -> list[str]:
        return [piece for piece in text.split("|") if piece.strip()]


def chunkers() -> dict[str, Any]:
    return {
        "recursive-default": RecursiveChunker(),
        "recursive-small": RecursiveChunker(
            chunk_size=37, overlap=9, min_chunk_size=5, keep_separator="start", trim=False
        ),
        "recursive-bytes": RecursiveChunker(
            chunk_size=64,
            overlap=0,
            unit="byte",
            separators=["\n\n", [". ", "。"], " "],
            keep_separator=False,
            name="bytes",
        ),
        "parent-child": ParentChildChunker(parent_size=200, child_size=50, child_overlap=10),
        "parent-child-custom": ParentChildChunker(
            parent_chunker=RecursiveChunker(chunk_size=150, overlap=0),
            child_chunker=RecursiveChunker(chunk_size=40, overlap=0, keep_separator="start"),
        ),
        "parent-child-bytes": ParentChildChunker(200, 50, child_overlap=0, unit="byte"),
        "hierarchical": HierarchicalChunker(sizes=[300, 100, 30], overlap=0),
        "hierarchical-bytes": HierarchicalChunker(sizes=[300, 100, 30], overlap=0, unit="byte"),
        "pipe": PipeChunker(),
    }


def _tree(chunker: Any, text: str) -> list[Any]:
    return chunker.chunk_tree(text) if hasattr(chunker, "chunk_tree") else chunker.chunk(text)


def test_document_pickles() -> None:
    doc = Document(TEXT, id="doc-1", metadata={"title": "t", "n": 3}, source="a.txt")
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(doc, protocol=protocol))
        assert (again.text, again.id, dict(again.metadata), again.source) == (
            doc.text,
            doc.id,
            dict(doc.metadata),
            doc.source,
        )
    default = Document(TEXT)
    assert pickle.loads(pickle.dumps(default)).id == default.id


def test_chunk_pickles() -> None:
    doc = Document(TEXT, metadata={"title": "t"}, source="a.txt")
    tree = ParentChildChunker(parent_size=200, child_size=50).chunk_tree(doc)
    assert tree
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        again = pickle.loads(pickle.dumps(tree, protocol=protocol))
        assert [chunk_record(c) for c in again] == [chunk_record(c) for c in tree]
        assert all(type(a) is type(b) for a, b in zip(again, tree, strict=True))


@pytest.mark.parametrize("name", list(chunkers()))
def test_chunker_pickles_and_chunks_the_same(name: str) -> None:
    chunker = chunkers()[name]
    text = TEXT.replace(". ", ". |") if name == "pipe" else TEXT
    before = [chunk_record(c) for c in _tree(chunker, text)]
    assert before
    again = pickle.loads(pickle.dumps(chunker))
    assert type(again) is type(chunker)
    assert again.settings() == chunker.settings()
    assert again.fingerprint() == chunker.fingerprint()
    assert [chunk_record(c) for c in _tree(again, text)] == before
    spans_before = chunker.spans(text)
    spans_after = again.spans(text)
    assert spans_after.dtype == spans_before.dtype
    assert spans_after.tolist() == spans_before.tolist()


def test_registry_pickles() -> None:
    chunker = ParentChildChunker(parent_size=200, child_size=50)
    children = chunker.chunk(Document(TEXT, id="doc"))
    registry = ParentRegistry()
    for parent in (c for c in chunker.chunk_tree(Document(TEXT, id="doc")) if c.level == 1):
        registry.add(parent)
    again = pickle.loads(pickle.dumps(registry))
    assert len(again) == len(registry) > 0
    for child in children:
        assert chunk_record(again.parent_of(child)) == chunk_record(registry.parent_of(child))
    assert [c.id for c in again.expand(children)] == [c.id for c in registry.expand(children)]
    # The copy is independent and still works (its lock was rebuilt, not shared).
    again.clear()
    assert len(again) == 0 and len(registry) > 0
    again.add(registry.parent_of(children[0]))
    assert len(again) == 1


@pytest.mark.parametrize("name", list(chunkers()))
def test_settings_are_json_and_fingerprint_hashes_the_cut(name: str) -> None:
    chunker = chunkers()[name]
    settings = chunker.settings()
    assert isinstance(settings, dict)
    assert json.loads(json.dumps(settings)) == settings
    fingerprint = chunker.fingerprint()
    assert isinstance(fingerprint, str) and len(fingerprint) == 16
    int(fingerprint, 16)
    # The cut of each level, top first, as canonical JSON: one per level.
    cuts = chunker._cuts()
    assert len(cuts) == len(chunker._levels())
    payload = json.dumps({"levels": cuts}, sort_keys=True, separators=(",", ":"))
    assert fingerprint == hashlib.sha256(payload.encode()).hexdigest()[:16]


def test_fingerprint_ignores_the_name_and_follows_the_settings() -> None:
    assert (
        RecursiveChunker(chunk_size=100, name="a").fingerprint()
        == RecursiveChunker(chunk_size=100, name="b").fingerprint()
        == RecursiveChunker(chunk_size=100).fingerprint()
    )
    prints = {
        RecursiveChunker(chunk_size=100).fingerprint(),
        RecursiveChunker(chunk_size=101).fingerprint(),
        RecursiveChunker(chunk_size=100, unit="byte").fingerprint(),
        RecursiveChunker(chunk_size=100, trim=False).fingerprint(),
        RecursiveChunker(chunk_size=100, keep_separator="start").fingerprint(),
        RecursiveChunker(chunk_size=100, separators=["\n"]).fingerprint(),
        RecursiveChunker(chunk_size=100, overlap=10).fingerprint(),
        RecursiveChunker(chunk_size=100, min_chunk_size=10).fingerprint(),
        ParentChildChunker(200, 100).fingerprint(),
        ParentChildChunker(201, 100).fingerprint(),
        HierarchicalChunker([200, 100, 50]).fingerprint(),
    }
    assert len(prints) == 11
    # The same two levels under another class: the same cut, so the same fingerprint.
    assert (
        HierarchicalChunker([200, 100]).fingerprint() == ParentChildChunker(200, 100).fingerprint()
    )


_SUBPROCESS = """
import json, sys
from spanchunk import Document, HierarchicalChunker, ParentChildChunker, RecursiveChunker
text = sys.stdin.buffer.read().decode("utf-8")
out = {}
for name, chunker in [
    ("recursive", RecursiveChunker(chunk_size=37, overlap=9, unit="byte")),
    ("parent-child", ParentChildChunker(parent_size=200, child_size=50, child_overlap=10)),
    ("hierarchical", HierarchicalChunker(sizes=[300, 100, 30])),
]:
    tree = chunker.chunk_tree(text) if hasattr(chunker, "chunk_tree") else chunker.chunk(text)
    out[name] = {
        "fingerprint": chunker.fingerprint(),
        "settings": chunker.settings(),
        "ids": [[c.id, c.parent_id, c.start_byte, c.end_byte] for c in tree],
    }
out["document"] = Document(text).id
sys.stdout.write(json.dumps(out, ensure_ascii=True))
"""


def test_ids_and_fingerprints_are_the_same_in_another_process() -> None:
    env = dict(os.environ, PYTHONHASHSEED="4242")
    completed = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS],
        input=TEXT.encode("utf-8"),
        capture_output=True,
        env=env,
        cwd=REPO_ROOT,
        check=False,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stderr.decode(errors="replace")
    theirs = json.loads(completed.stdout)
    assert theirs["document"] == Document(TEXT).id
    for name, chunker in [
        ("recursive", RecursiveChunker(chunk_size=37, overlap=9, unit="byte")),
        ("parent-child", ParentChildChunker(parent_size=200, child_size=50, child_overlap=10)),
        ("hierarchical", HierarchicalChunker(sizes=[300, 100, 30])),
    ]:
        tree = _tree(chunker, TEXT)
        assert theirs[name]["fingerprint"] == chunker.fingerprint()
        assert theirs[name]["settings"] == json.loads(json.dumps(chunker.settings()))
        assert theirs[name]["ids"] == [[c.id, c.parent_id, c.start_byte, c.end_byte] for c in tree]


def test_chunkers_work_in_a_process_pool() -> None:
    chunker = ParentChildChunker(parent_size=200, child_size=50, child_overlap=10)
    texts = [TEXT, TEXT[::-1], TEXT.upper()]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        remote = list(pool.map(chunker.chunk_tree, texts))
    for text, chunks in zip(texts, remote, strict=True):
        assert [chunk_record(c) for c in chunks] == [
            chunk_record(c) for c in chunker.chunk_tree(text)
        ]
