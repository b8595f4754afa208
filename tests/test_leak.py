"""No memory grows over 10^5 chunking calls through the Python API: a leak test, not a timing
test. A child process warms up (caches, the registry, allocator pools), reads its resident
set size, makes the calls, and reads it again; the growth must stay under a generous bound
(a leak of one chunk's worth of memory per call, about 100 bytes or more, would exceed it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import spanchunk

CALLS = 100_000
# Allocator noise after the warm-up is well under 1 MB; 10^5 calls leaking 100 bytes each
# would be 10 MB.
MAX_GROWTH_BYTES = 8 * 1024 * 1024

CHILD = r"""
import json, sys
from spanchunk import Document, ParentChildChunker, RecursiveChunker

def rss_bytes():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE

import os
PAGE = os.sysconf("SC_PAGE_SIZE")
calls = int(sys.argv[1])
# A few dozen distinct small documents, cycled: the parent registry fills up in the warm-up
# (same text, same ids) and then stays the same size.
texts = [
    f"Doc {n}. " + "Small chunks are searched; parents are read. " * (1 + n % 7)
    + "\n\nCafé 👨‍👩‍👧‍👦 naïve " * (n % 3)
    for n in range(40)
]
documents = [Document(text, metadata={"n": n, "tags": ["a", "b"]}) for n, text in enumerate(texts)]
recursive = RecursiveChunker(chunk_size=60, overlap=20)
tree = ParentChildChunker(parent_size=120, child_size=40)

def one_call(number):
    kind = number % 4
    text = texts[number % len(texts)]
    if kind == 0:
        chunks = recursive.chunk_text(text)
        return sum(len(chunk.text) + len(chunk.id) for chunk in chunks)
    if kind == 1:
        children = tree.chunk(documents[number % len(documents)])
        return sum(len(child.parent_id) for child in children)
    if kind == 2:
        return len(tree.spans(text))
    return len(recursive.chunk([text, documents[number % len(documents)]]))

for number in range(calls // 10):
    one_call(number)
before = rss_bytes()
for number in range(calls):
    one_call(number)
after = rss_bytes()
print(json.dumps({"before": before, "after": after, "parents": len(tree.parents)}))
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc/self/statm")
def test_no_rss_growth_over_many_calls() -> None:
    package_parent = str(Path(spanchunk.__file__).resolve().parent.parent)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(CALLS)],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": package_parent},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    figures = json.loads(result.stdout)
    growth = figures["after"] - figures["before"]
    assert growth < MAX_GROWTH_BYTES, (
        f"RSS grew {growth / 2**20:.1f} MiB over {CALLS} calls "
        f"({figures['before'] / 2**20:.1f} -> {figures['after'] / 2**20:.1f} MiB)"
    )
