"""Throughput of spanchunk on each folder of the corpus, printed as a Markdown table.

The job is the benchmarks' parent-child one: parents of 2000 chars, children of 400, no overlap.
For every folder of the corpus, all its files are chunked once to warm up, then timed
``--repeat`` times; the table gives the median, in MB of UTF-8 text per second, of

- ``spans``: ``ParentChildChunker(2000, 400).spans(text)``, integers only;
- ``chunk_tree``: ``ParentChildChunker(2000, 400).chunk_tree(text)``, ``Chunk`` objects for
  parents and children.

Usage (from the repository root, with spanchunk installed)::

    python benches/throughput.py [--corpus DIR] [--repeat 5]

The corpus is ``--corpus``, else ``$SPANCHUNK_CORPUS``, else ``../shared/corpus`` next to the
repository.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import spanchunk
from spanchunk import ParentChildChunker

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPOSITORY.parent / "shared" / "corpus"


def corpus_root(argument: str | None) -> Path:
    """The corpus folder: the argument, else $SPANCHUNK_CORPUS, else the shared corpus."""
    if argument:
        return Path(argument)
    from_env = os.environ.get("SPANCHUNK_CORPUS")
    return Path(from_env) if from_env else DEFAULT_CORPUS


def load_folder(folder: Path, suffixes: Iterable[str] | None = None) -> list[str]:
    """The text of every regular, non-hidden file under folder (with one of ``suffixes``,
    when given), in sorted order.

    Files are decoded as UTF-8 with any byte order mark kept, as the CLI reads them.
    """
    wanted = None if suffixes is None else tuple(suffixes)
    texts = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or not path.is_file():
            continue
        if wanted is None or path.suffix in wanted:
            texts.append(path.read_bytes().decode("utf-8"))
    return texts


def median_seconds(job: Callable[[], object], repeat: int, between: Callable[[], None]) -> float:
    """Median wall time of job over repeat runs, after one untimed warm-up run.

    between() runs after every run, outside the timing (it empties the parent registry).
    """
    job()
    between()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        job()
        times.append(time.perf_counter() - started)
        between()
    return statistics.median(times)


def measure(texts: list[str], repeat: int) -> dict[str, float]:
    """MB/s of spans and chunk_tree over all texts, and the chunk counts of one pass."""
    chunker = ParentChildChunker(2000, 400)
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6

    def spans_job() -> None:
        for text in texts:
            chunker.spans(text)

    def tree_job() -> None:
        for text in texts:
            chunker.chunk_tree(text)

    spans_s = median_seconds(spans_job, repeat, chunker.clear)
    tree_s = median_seconds(tree_job, repeat, chunker.clear)

    parents = children = 0
    for text in texts:
        levels = chunker.spans(text)["level"]
        parents += int((levels == 1).sum())
        children += int((levels == 0).sum())
    return {
        "megabytes": megabytes,
        "parents": parents,
        "children": children,
        "spans_mb_s": megabytes / spans_s,
        "tree_mb_s": megabytes / tree_s,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure every folder of the corpus and print the table."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", metavar="DIR", help="corpus folder (one row per sub-folder)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    args = parser.parse_args(argv)

    root = corpus_root(args.corpus)
    if not root.is_dir():
        print(
            f"throughput: no corpus at {root}; pass --corpus DIR or set SPANCHUNK_CORPUS",
            file=sys.stderr,
        )
        return 1
    folders = sorted(
        path for path in root.iterdir() if path.is_dir() and not path.name.startswith(".")
    )

    print(
        f"spanchunk {spanchunk.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs; "
        f"ParentChildChunker(2000, 400), median of {args.repeat} after a warm-up, one thread"
    )
    print()
    print("| corpus | files | MB | parents | children | spans MB/s | chunk_tree MB/s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for folder in folders:
        texts = load_folder(folder)
        if not texts:
            continue
        figures = measure(texts, args.repeat)
        print(
            f"| {folder.name} | {len(texts)} | {figures['megabytes']:.2f} "
            f"| {figures['parents']} | {figures['children']} "
            f"| {figures['spans_mb_s']:.1f} | {figures['tree_mb_s']:.1f} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
