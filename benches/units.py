"""Haystack's units, both sides in one run: ``HierarchicalDocumentSplitter`` against
``HierarchicalChunker`` on the same settings, over every folder of the shared corpus.

- sentences: ``HierarchicalDocumentSplitter(block_sizes={10, 3}, split_by="sentence")``
  (NLTK's punkt, as Haystack ships it) against ``HierarchicalChunker([10, 3],
  unit="sentence")`` (UAX #29 sentences);
- words: ``HierarchicalDocumentSplitter(block_sizes={200, 50}, split_by="word")`` (pieces
  between spaces) against ``HierarchicalChunker([200, 50], unit="word")`` (runs of
  non-whitespace).

Both sides produce their own objects for every level: Haystack ``Document`` objects (the root
included, as it returns them), spanchunk ``Chunk`` objects (``chunk_tree``). The two count
units differently (see the README), so chunk counts differ; the job is the same. Spans are
checked on both sides after the warm-up pass: every spanchunk chunk slices back from the
document (chars and bytes); for Haystack, the share of blocks whose ``split_idx_start``
slices back from their parent's text is reported.

Each system gets one warm-up pass per folder, then ``--repeat`` timed passes, taking turns; a
pass slower than ``--budget`` seconds stops that system's repeats. Figures are medians in
MB/s (UTF-8 MB of the folder per second of one pass), and the ratio of the medians.

Haystack's sentence splitter needs NLTK's ``punkt_tab``; when ``NLTK_DATA`` is not set, the
copy that LlamaIndex ships (``llama_index/core/_static/nltk_cache``) is used, so nothing is
downloaded.

Usage (from the repository root, with the test extras installed)::

    python benches/units.py [--corpus DIR] [--repeat 3] [--budget 120] [--out benches/results]

Writes ``units.md`` and ``units.json`` under ``--out``.
"""

# ruff: noqa: PLC0415 - the frameworks are imported where they are measured

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"gutenberg": "*.txt", "markdown-en": "*.md", "markdown-zh": "*.md"}
JOBS = {"sentence": [10, 3], "word": [200, 50]}


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    configured = os.environ.get("SPANCHUNK_CORPUS")
    return Path(configured) if configured else ROOT.parent / "shared" / "corpus"


def read_folder(root: Path, folder: str) -> list[str]:
    return [
        path.read_text(encoding="utf-8") for path in sorted((root / folder).glob(FOLDERS[folder]))
    ]


def use_shipped_punkt() -> None:
    """Points NLTK at the punkt_tab that LlamaIndex ships, unless NLTK_DATA says otherwise."""
    if os.environ.get("NLTK_DATA"):
        return
    try:
        import llama_index.core
    except ImportError:
        return
    cache = Path(llama_index.core.__file__).parent / "_static" / "nltk_cache"
    if cache.is_dir():
        os.environ["NLTK_DATA"] = str(cache)


def haystack_job(unit: str, sizes: list[int]) -> Callable[[list[str]], list[Any]]:
    from haystack import Document
    from haystack.components.preprocessors import HierarchicalDocumentSplitter

    splitter = HierarchicalDocumentSplitter(
        block_sizes=set(sizes),
        split_overlap=0,
        split_by=unit,  # type: ignore[arg-type]
    )

    def run(texts: list[str]) -> list[Any]:
        return splitter.run([Document(content=text) for text in texts])["documents"]

    return run


def spanchunk_job(unit: str, sizes: list[int]) -> Callable[[list[str]], list[Any]]:
    from spanchunk import Document, HierarchicalChunker

    chunker = HierarchicalChunker(sizes, unit=unit)  # type: ignore[arg-type]

    def run(texts: list[str]) -> list[Any]:
        return chunker.chunk_tree([Document(text) for text in texts])

    return run


def check_spanchunk(texts: list[str], chunks: list[Any]) -> float:
    """Share of exact chunks (1.0 or an AssertionError): chars and bytes slice back."""
    from spanchunk import Document

    by_id = {Document(text).id: text for text in texts}
    for chunk in chunks:
        text = by_id[chunk.document_id]
        assert text[chunk.start_char : chunk.end_char] == chunk.text, chunk
        encoded = chunk.text.encode("utf-8")
        assert text.encode("utf-8")[chunk.start_byte : chunk.end_byte] == encoded, chunk
    return 1.0


def check_haystack(documents: list[Any]) -> float:
    """Share of non-root blocks whose split_idx_start slices back from their parent."""
    by_id = {document.id: document for document in documents}
    blocks = [document for document in documents if document.meta.get("__parent_id")]
    exact = 0
    for block in blocks:
        parent = by_id[block.meta["__parent_id"]]
        start = block.meta.get("split_idx_start")
        if start is not None and parent.content[start : start + len(block.content)] == (
            block.content
        ):
            exact += 1
    return exact / len(blocks) if blocks else 1.0


def levels_of(system: str, output: list[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in output:
        level = str(item.meta["__level"] if system == "haystack" else item.level)
        counts[level] = counts.get(level, 0) + 1
    return dict(sorted(counts.items()))


def measure(
    texts: list[str], jobs: dict[str, Callable[[list[str]], list[Any]]], repeat: int, budget: float
) -> dict[str, Any]:
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
    result: dict[str, Any] = {"mb": round(megabytes, 3)}
    outputs = {name: job(texts) for name, job in jobs.items()}  # warm-up
    result["exact"] = {
        "spanchunk": check_spanchunk(texts, outputs["spanchunk"]),
        "haystack": round(check_haystack(outputs["haystack"]), 4),
    }
    result["chunks"] = {name: levels_of(name, output) for name, output in outputs.items()}
    del outputs
    times: dict[str, list[float]] = {name: [] for name in jobs}
    for _ in range(repeat):
        for name, job in jobs.items():
            if times[name] and times[name][-1] > budget:
                continue
            start = time.perf_counter()
            job(texts)
            times[name].append(time.perf_counter() - start)
    result["seconds"] = {
        name: [round(value, 4) for value in values] for name, values in times.items()
    }
    medians = {name: statistics.median(values) for name, values in times.items()}
    result["mb_per_s"] = {name: round(megabytes / value, 2) for name, value in medians.items()}
    result["ratio"] = round(medians["haystack"] / medians["spanchunk"], 1)
    return result


def report(results: dict[str, Any], meta: dict[str, Any]) -> str:
    lines = [
        "# Haystack's units: HierarchicalDocumentSplitter against HierarchicalChunker",
        "",
        f"Run: {meta['when']}, Python {meta['python']}, {meta['machine']}; "
        f"{meta['repeat']} timed passes per system (median), taking turns. "
        "Both sides produce their objects for every level (Haystack Documents with the root, "
        "spanchunk Chunks). Bar: >= 20x, exact spans.",
        "",
        "| unit, sizes | folder | MB | Haystack MB/s | spanchunk MB/s | ratio "
        "| spans exact (spanchunk / Haystack) | chunks per level (spanchunk / Haystack) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for job, folders in results.items():
        unit, sizes = job.split(":")
        for folder, row in folders.items():
            exact = row["exact"]
            ours = ", ".join(f"{level}: {n}" for level, n in row["chunks"]["spanchunk"].items())
            theirs = ", ".join(f"{level}: {n}" for level, n in row["chunks"]["haystack"].items())
            lines.append(
                f"| {unit} {sizes} | {folder} | {row['mb']} | {row['mb_per_s']['haystack']} "
                f"| {row['mb_per_s']['spanchunk']} | **{row['ratio']}x** "
                f"| {exact['spanchunk']:.0%} / {exact['haystack']:.1%} | {ours} / {theirs} |"
            )
        # The whole corpus: every folder once, the seconds of one pass summed.
        total = sum(row["mb"] for row in folders.values())
        seconds = {
            name: sum(row["mb"] / row["mb_per_s"][name] for row in folders.values())
            for name in ("haystack", "spanchunk")
        }
        lines.append(
            f"| {unit} {sizes} | whole corpus | {round(total, 3)} "
            f"| {total / seconds['haystack']:.2f} | {total / seconds['spanchunk']:.2f} "
            f"| **{seconds['haystack'] / seconds['spanchunk']:.1f}x** | | |"
        )
    lines += [
        "",
        "Levels: spanchunk numbers from the leaves (0) up; Haystack from the root (0, the "
        "whole document) down. Haystack keeps a block that would have one child as it is "
        "(no child), spanchunk gives it one child with its span.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--out", default=str(ROOT / "benches" / "results"))
    args = parser.parse_args(argv)
    use_shipped_punkt()
    root = corpus_dir(args.corpus)
    results: dict[str, Any] = {}
    for unit, sizes in JOBS.items():
        jobs = {"haystack": haystack_job(unit, sizes), "spanchunk": spanchunk_job(unit, sizes)}
        key = f"{unit}:{{{', '.join(map(str, sizes))}}}"
        results[key] = {}
        for folder in FOLDERS:
            row = measure(read_folder(root, folder), jobs, args.repeat, args.budget)
            results[key][folder] = row
            print(
                f"{unit} {sizes} {folder}: haystack {row['mb_per_s']['haystack']} MB/s, "
                f"spanchunk {row['mb_per_s']['spanchunk']} MB/s, {row['ratio']}x",
                flush=True,
            )
    meta = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "repeat": args.repeat,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "units.json").write_text(
        json.dumps({"meta": meta, "results": results}, indent=2) + "\n", encoding="utf-8"
    )
    (out / "units.md").write_text(report(results, meta), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
