"""Golden digests: every chunk of every level, with its id, over the whole corpus.

One sha256 per setting over every field of every chunk ``chunk_tree`` (or ``chunk``) gives for
each corpus file, in order. A change that alters chunks on purpose updates
``golden/digests.json`` in the same commit and says why; any other change must leave the
digests as they are. Regenerate with ``SPANCHUNK_UPDATE_GOLDEN=1 pytest tests/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from spanchunk import (
    Chunk,
    Chunker,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    RecursiveChunker,
)

DIGESTS = Path(__file__).resolve().parent / "golden" / "digests.json"

SETTINGS: dict[str, Callable[[], Chunker]] = {
    "recursive-default-chars": RecursiveChunker,
    "parent-child-2000-400-chars": lambda: ParentChildChunker(2000, 400),
    "parent-child-2000-400-overlap-100": lambda: ParentChildChunker(2000, 400, child_overlap=100),
    "recursive-tiny-40-overlap-9": lambda: RecursiveChunker(40, overlap=9),
    "hierarchical-2048-512-128": lambda: HierarchicalChunker([2048, 512, 128]),
    "parent-child-2000-400-bytes": lambda: ParentChildChunker(2000, 400, unit="byte"),
    "parent-child-1024-256-o200k": lambda: ParentChildChunker(
        1024, 256, unit="token", encoding="o200k_base"
    ),
    "parent-child-markdown-parents": lambda: ParentChildChunker(
        2000, 400, parent_chunker="markdown"
    ),
}


def _record(chunk: Chunk) -> bytes:
    fields = [
        chunk.id,
        chunk.document_id,
        chunk.level,
        chunk.index,
        chunk.start_char,
        chunk.end_char,
        chunk.start_byte,
        chunk.end_byte,
        chunk.parent_id,
        list(chunk.child_ids),
        dict(chunk.metadata),
        chunk.text,
    ]
    return json.dumps(fields, ensure_ascii=False, sort_keys=True, default=list).encode()


def _digest(chunker: Chunker, corpus: dict[str, list[tuple[str, str]]]) -> str:
    digest = hashlib.sha256()
    tree = getattr(chunker, "chunk_tree", chunker.chunk)
    for folder in sorted(corpus):
        for name, text in corpus[folder]:
            for chunk in tree(Document(text, source=name)):
                digest.update(_record(chunk))
                digest.update(b"\n")
    return digest.hexdigest()


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_golden_digest(setting: str, corpus: dict[str, list[tuple[str, str]]]) -> None:
    actual = _digest(SETTINGS[setting](), corpus)
    if os.environ.get("SPANCHUNK_UPDATE_GOLDEN"):
        stored = json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}
        stored[setting] = actual
        DIGESTS.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
    expected = json.loads(DIGESTS.read_text())[setting]
    assert actual == expected, (
        f"the chunks of {setting!r} changed over the corpus: if on purpose, regenerate "
        "tests/golden/digests.json (SPANCHUNK_UPDATE_GOLDEN=1) and say why in the commit"
    )


def test_every_setting_has_a_digest() -> None:
    assert sorted(json.loads(DIGESTS.read_text())) == sorted(SETTINGS)
