"""Golden digests: every chunk of every level, with its id, over the whole corpus.

One sha256 per setting over every field of every chunk ``chunk_tree`` (or ``chunk``) gives for
each corpus file, in order: over the vendored texts (``tests/corpus/texts``; the digests in
``tests/corpus/digests.json``) on every run, and over the whole shared corpus (the digests in
``tests/golden/digests.json``) where ``SPANCHUNK_CORPUS`` names it, as in CI. A change that
alters chunks on purpose updates both files in the same commit and says why; any other change
must leave the digests as they are. Regenerate with ``SPANCHUNK_CORPUS=../shared/corpus
SPANCHUNK_UPDATE_GOLDEN=1 pytest tests/test_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import VENDORED_CORPUS, corpus_root
from spanchunk import (
    Chunk,
    Chunker,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    RecursiveChunker,
)

# The digests of each corpus: the vendored texts every clone has, and the whole shared corpus.
DIGESTS = {
    "vendored": Path(__file__).resolve().parent / "corpus" / "digests.json",
    "shared": Path(__file__).resolve().parent / "golden" / "digests.json",
}
# The vendored texts always; the shared corpus where SPANCHUNK_CORPUS names it.
CORPORA = ["vendored"] + (["shared"] if corpus_root() != VENDORED_CORPUS else [])

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
@pytest.mark.parametrize("which", CORPORA)
def test_golden_digest(setting: str, which: str, request: pytest.FixtureRequest) -> None:
    path = DIGESTS[which]
    corpus = request.getfixturevalue("vendored_corpus" if which == "vendored" else "corpus")
    actual = _digest(SETTINGS[setting](), corpus)
    if os.environ.get("SPANCHUNK_UPDATE_GOLDEN"):
        stored = json.loads(path.read_text()) if path.exists() else {}
        stored[setting] = actual
        path.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
    expected = json.loads(path.read_text())[setting]
    assert actual == expected, (
        f"the chunks of {setting!r} changed over the {which} corpus: if on purpose, regenerate "
        "tests/corpus/digests.json and tests/golden/digests.json (SPANCHUNK_UPDATE_GOLDEN=1, "
        "with SPANCHUNK_CORPUS naming the shared corpus) and say why in the commit"
    )


@pytest.mark.parametrize("which", sorted(DIGESTS))
def test_every_setting_has_a_digest(which: str) -> None:
    assert sorted(json.loads(DIGESTS[which].read_text())) == sorted(SETTINGS)
