"""Parent stores against their bars: SqliteRegistry and ParentRegistry in the same run.

Figures (every parent of the shared corpus, ``ParentChildChunker(2000, 400)``):

- **add**: ``store.add(parents, fingerprint=...)`` of every parent in one call, into a new
  file (opened before the clock starts; the commit is timed), in MB/s of parent text
  (UTF-8). Bar (SqliteRegistry): >= 50 MB/s.
- **read back**: the same store reopened (``SqliteRegistry(path)``) and read back whole
  (``list(store)``: every ``Chunk``, text and metadata included), in MB/s. Bar: >= 100 MB/s.
- **expand**: ``retrieval.expand`` of 100 leaf hits drawn at random over the corpus, median
  wall time. Bar: < 2 ms.
- **auto_merge**: ``retrieval.auto_merge`` of 100 scored leaf hits over three levels
  (``HierarchicalChunker([2000, 400, 100])``; hits drawn as whole and partial sibling groups
  so that merging happens at both levels), median wall time. Bar: < 5 ms.
- **upsert**: every document upserted on its own (one transaction each), then re-upserted
  unchanged (nothing written), reported without a bar.

The store file lives in a temporary folder (``--tmp``, default the system's). Throughputs
(add, read back) are the best of several runs, each on a fresh file / a fresh open, as in
``scale.py`` (on a shared machine the best is what the code can do; the median is what the
neighbours let it); latencies (expand, auto_merge) are medians of 201 runs, as the bars say.
The CPU time of add and read back is reported too.

Usage (from the repository root)::

    python benches/store.py [--corpus DIR] [--out benches/results] [--tmp DIR]

Writes ``store.md`` in ``--out`` and prints it.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import spanchunk
from spanchunk import (
    Chunk,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    ParentRegistry,
    SqliteRegistry,
)
from spanchunk.retrieval import auto_merge, expand

# benches/ is on sys.path when this file runs as a script.
from throughput import corpus_root, load_folder

MB = 1_000_000
BARS = {"add": 50.0, "read": 100.0, "expand": 2.0, "auto_merge": 5.0}


def corpus_documents(root: Path) -> list[Document]:
    documents = []
    for folder in sorted(path for path in root.iterdir() if path.is_dir()):
        for number, text in enumerate(load_folder(folder)):
            documents.append(Document(text, id=f"{folder.name}/{number}"))
    return documents


def median_of(
    job: Callable[[], Any], runs: int, before: Callable[[], None] | None = None, best: bool = False
) -> float:
    """Median (or best) wall time of ``job`` (``before`` runs untimed ahead of each run).

    The cyclic collector runs once ahead and is off during the runs: a full collection
    between runs of a millisecond walks the whole corpus's objects and, on a busy machine,
    made the next run several times slower (the scheduler preempts right after it).
    """
    times = []
    cpu_times = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            if before is not None:
                before()
            start, start_cpu = time.perf_counter(), time.process_time()
            job()
            times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - start_cpu)
    finally:
        gc.enable()
    LAST_CPU[0] = min(cpu_times)
    return min(times) if best else statistics.median(times)


#: The least CPU time of the runs of the last ``median_of``.
LAST_CPU = [0.0]


def scored_hits(leaves: list[Chunk], parents: dict[str, Chunk], rng: random.Random) -> list:
    """100 leaf hits: every leaf of a few top chunks (they merge two levels up), most leaves
    of some middle chunks (one level up) and scattered leaves (no merge), shuffled."""
    by_top: dict[str, list[Chunk]] = {}
    by_middle: dict[str, list[Chunk]] = {}
    for leaf in leaves:
        middle = parents[leaf.parent_id]  # type: ignore[index]
        by_middle.setdefault(middle.id, []).append(leaf)
        by_top.setdefault(middle.parent_id, []).append(leaf)  # type: ignore[arg-type]
    hits: list[Chunk] = []
    for group in rng.sample([g for g in by_top.values() if len(g) <= 25], 2):
        hits += group
    for group in rng.sample(list(by_middle.values()), 6):
        hits += group[: len(group) * 3 // 4 + 1]
    chosen = {hit.id for hit in hits}
    spare = [leaf for leaf in leaves if leaf.id not in chosen]
    hits = hits[:100] + rng.sample(spare, max(0, 100 - len(hits)))
    rng.shuffle(hits)
    return [(hit, rng.random()) for hit in hits]


def main() -> None:  # noqa: PLR0915 - one measurement after another, read top to bottom
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    parser.add_argument("--tmp", default=None)
    parser.add_argument("--runs", type=int, default=7)
    arguments = parser.parse_args()

    documents = corpus_documents(corpus_root(arguments.corpus))
    chunker = ParentChildChunker(2000, 400)
    fingerprint = chunker.fingerprint()
    tree = chunker.chunk_tree(documents)
    parents = [chunk for chunk in tree if chunk.level > 0]
    leaves = [chunk for chunk in tree if chunk.level == 0]
    parent_mb = sum(len(chunk.text.encode()) for chunk in parents) / MB
    for chunk in tree:  # materialise the lazy texts outside the timings
        _ = chunk.text, chunk.id, chunk.parent_id, chunk.child_ids

    deep = HierarchicalChunker(sizes=[2000, 400, 100])
    deep_tree = deep.chunk_tree(documents)
    deep_parents = [chunk for chunk in deep_tree if chunk.level > 0]
    deep_leaves = [chunk for chunk in deep_tree if chunk.level == 0]
    rng = random.Random(12)
    hits = rng.sample(leaves, 100)
    merge_hits = scored_hits(deep_leaves, {c.id: c for c in deep_parents}, rng)

    workdir = Path(tempfile.mkdtemp(dir=arguments.tmp, prefix="spanchunk-store-"))
    path = workdir / "parents.sqlite"
    results: dict[str, dict[str, float]] = {"sqlite": {}, "memory": {}}
    runs = arguments.runs

    opened: list[SqliteRegistry] = []

    def fresh_file() -> None:
        while opened:
            opened.pop().close()
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)

    def fresh_store() -> None:
        fresh_file()
        opened.append(SqliteRegistry(path))

    def add_sqlite() -> None:
        opened[0].add(parents, fingerprint=fingerprint)

    results["sqlite"]["add"] = parent_mb / median_of(add_sqlite, runs, fresh_store, best=True)
    results["sqlite"]["add_cpu"] = parent_mb / LAST_CPU[0]
    results["memory"]["add"] = parent_mb / median_of(
        lambda: ParentRegistry().add(parents, fingerprint=fingerprint), runs, best=True
    )

    fresh_store()
    add_sqlite()
    fresh_file_closed = opened.pop()
    fresh_file_closed.close()
    read_back: list[Chunk] = []

    def read_sqlite() -> None:
        with SqliteRegistry(path) as store:
            read_back[:] = list(store)

    results["sqlite"]["read"] = parent_mb / median_of(read_sqlite, runs, best=True)
    results["sqlite"]["read_cpu"] = parent_mb / LAST_CPU[0]
    assert read_back == parents and len(read_back) == len(parents)
    registry = ParentRegistry(parents)
    results["memory"]["read"] = parent_mb / median_of(lambda: list(registry), runs, best=True)

    with SqliteRegistry(path) as store:
        assert expand(hits, store) == expand(hits, registry)
        results["sqlite"]["expand"] = 1000 * median_of(lambda: expand(hits, store), 201)
    results["memory"]["expand"] = 1000 * median_of(lambda: expand(hits, registry), 201)

    deep_path = workdir / "deep.sqlite"
    deep_registry = ParentRegistry(deep_parents)
    with SqliteRegistry(deep_path) as store:
        store.add(deep_parents)
        merged = auto_merge(merge_hits, store)
        assert merged == auto_merge(merge_hits, deep_registry)
        merged_levels = sorted({chunk.level for chunk, _ in merged})
        results["sqlite"]["auto_merge"] = 1000 * median_of(
            lambda: auto_merge(merge_hits, store), 201
        )
    results["memory"]["auto_merge"] = 1000 * median_of(
        lambda: auto_merge(merge_hits, deep_registry), 201
    )

    by_document: dict[str, list[Chunk]] = {}
    for chunk in parents:
        by_document.setdefault(chunk.document_id, []).append(chunk)
    upsert_path = workdir / "upsert.sqlite"

    def upsert_all(store: Any) -> None:
        for document_id, chunks in by_document.items():
            store.upsert(document_id, chunks, fingerprint=fingerprint)

    with SqliteRegistry(upsert_path) as store:
        results["sqlite"]["upsert"] = parent_mb / median_of(lambda: upsert_all(store), 1)
        results["sqlite"]["unchanged"] = parent_mb / median_of(lambda: upsert_all(store), runs)
    memory = ParentRegistry()
    results["memory"]["upsert"] = parent_mb / median_of(lambda: upsert_all(memory), 1)
    results["memory"]["unchanged"] = parent_mb / median_of(lambda: upsert_all(memory), runs)
    size_mb = (
        sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())
        / MB
    )
    for item in workdir.iterdir():
        item.unlink()
    workdir.rmdir()

    sqlite, memory_row = results["sqlite"], results["memory"]

    def verdict(name: str) -> str:
        value = sqlite[name]
        passed = value >= BARS[name] if name in ("add", "read") else value < BARS[name]
        return "PASS" if passed else "FAIL"

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [
        "# Parent stores",
        "",
        f"`python benches/store.py`: spanchunk {spanchunk.__version__}, Python "
        f"{platform.python_version()}, SQLite {__import__('sqlite3').sqlite_version}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs (load average {load:.2f} at start), "
        f"{time.strftime('%Y-%m-%d %H:%M:%S %z')}.",
        "",
        f"Every parent of the shared corpus, `ParentChildChunker(2000, 400)`: {len(parents):,} "
        f"parents of {len(documents)} documents, {parent_mb:.2f} MB of parent text (UTF-8); "
        f"the SQLite file holds {size_mb:.2f} MB. auto_merge: `HierarchicalChunker([2000, 400, "
        f"100])`, {len(deep_parents):,} chunks above the leaves, 100 scored hits merging to "
        f"levels {merged_levels}. Best of {runs} runs (add, read back), medians of {runs} "
        "(upsert again) or 201 runs (expand, auto_merge); one run of the first upsert.",
        "",
        "| figure | SqliteRegistry | ParentRegistry | bar (SqliteRegistry) | result |",
        "|---|---:|---:|---|---|",
        f"| add every parent, one call | {sqlite['add']:.1f} MB/s | {memory_row['add']:.1f} MB/s "
        f"| >= {BARS['add']:.0f} MB/s | {verdict('add')} |",
        f"| add, CPU time | {sqlite['add_cpu']:.1f} MB/s | | | |",
        f"| reopen and read back whole | {sqlite['read']:.1f} MB/s | "
        f"{memory_row['read']:.1f} MB/s | >= {BARS['read']:.0f} MB/s | {verdict('read')} |",
        f"| reopen and read back, CPU time | {sqlite['read_cpu']:.1f} MB/s | | | |",
        f"| expand, 100 hits | {sqlite['expand']:.3f} ms | {memory_row['expand']:.3f} ms "
        f"| < {BARS['expand']:.0f} ms | {verdict('expand')} |",
        f"| auto_merge, 100 scored hits, three levels | {sqlite['auto_merge']:.3f} ms | "
        f"{memory_row['auto_merge']:.3f} ms | < {BARS['auto_merge']:.0f} ms | "
        f"{verdict('auto_merge')} |",
        f"| upsert each document (one transaction each) | {sqlite['upsert']:.1f} MB/s | "
        f"{memory_row['upsert']:.1f} MB/s | | |",
        f"| upsert each document again, unchanged | {sqlite['unchanged']:.1f} MB/s | "
        f"{memory_row['unchanged']:.1f} MB/s | | |",
        "",
    ]
    report = "\n".join(lines)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "store.md").write_text(report, encoding="utf-8")
    print(report)
    if any(verdict(name) == "FAIL" for name in BARS):
        sys.exit(1)


if __name__ == "__main__":
    main()
