"""Readable snapshots beside the golden digests: the chunks of the tests' own small texts
(``tests/data/texts/``), every field, as JSON a person can read in a diff.

The digests (``test_golden.py``) say *that* the chunks of the corpus changed; these say
*what* changed, chunk by chunk, on text every clone has. A change that alters chunks on
purpose updates both in the same commit (``SPANCHUNK_UPDATE_GOLDEN=1 pytest
tests/test_golden.py tests/test_snapshots.py``) and says why; ``git diff
tests/golden/snapshots/`` then shows each chunk that moved.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from spanchunk import Chunk, Document
from test_golden import SETTINGS

TEXTS = Path(__file__).resolve().parent / "data" / "texts"
SNAPSHOTS = Path(__file__).resolve().parent / "golden" / "snapshots"
# A few settings of the golden ones: every strategy and unit, at sizes that cut these texts.
SNAPSHOT_SETTINGS = (
    "parent-child-2000-400-chars",
    "recursive-tiny-40-overlap-9",
    "parent-child-markdown-parents",
    "parent-child-1024-256-o200k",
)


def _record(chunk: Chunk) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "level": chunk.level,
        "index": chunk.index,
        "chars": [chunk.start_char, chunk.end_char],
        "bytes": [chunk.start_byte, chunk.end_byte],
        "parent_id": chunk.parent_id,
        "child_ids": list(chunk.child_ids),
        "metadata": {
            key: list(v) if isinstance(v, tuple) else v for key, v in chunk.metadata.items()
        },
        "text": chunk.text,
    }


def _snapshot(setting: str) -> dict[str, list[dict[str, Any]]]:
    chunker = SETTINGS[setting]()
    tree = getattr(chunker, "chunk_tree", chunker.chunk)
    found = {}
    for path in sorted(TEXTS.glob("*.*")):
        if path.name == "README.md":
            continue
        text = path.read_bytes().decode("utf-8")
        found[path.name] = [_record(chunk) for chunk in tree(Document(text, id=path.name))]
    return found


def _first_difference(
    actual: dict[str, list[dict[str, Any]]], expected: dict[str, list[dict[str, Any]]]
) -> str:
    for name in sorted(set(actual) | set(expected)):
        mine, theirs = actual.get(name, []), expected.get(name, [])
        for position, (now, then) in enumerate(zip(mine, theirs, strict=False)):
            if now != then:
                changed = sorted(key for key in now if now.get(key) != then.get(key))
                return (
                    f"{name}, chunk {position} (level {then['level']}, index {then['index']}): "
                    f"{', '.join(changed)} changed\n  was: {json.dumps(then, ensure_ascii=False)}"
                    f"\n  now: {json.dumps(now, ensure_ascii=False)}"
                )
        if len(mine) != len(theirs):
            return f"{name}: {len(theirs)} chunks before, {len(mine)} now"
    return "no difference"


@pytest.mark.parametrize("setting", SNAPSHOT_SETTINGS)
def test_snapshot(setting: str) -> None:
    path = SNAPSHOTS / f"{setting}.json"
    actual = _snapshot(setting)
    if os.environ.get("SPANCHUNK_UPDATE_GOLDEN"):
        SNAPSHOTS.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(actual, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
            encoding="utf-8",
        )
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert actual == expected, (
        f"the chunks of {setting!r} changed: {_first_difference(actual, expected)}\nif on "
        "purpose, regenerate the snapshots and digests (SPANCHUNK_UPDATE_GOLDEN=1) and say why"
    )
