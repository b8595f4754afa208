"""The Markdown section of the comparison: Markdown-aware parent-child chunking on the Markdown
folders of the corpus, with the harness of ``benches/compare.py`` (same warm-up, check,
sampling in turns and medians; only the systems differ).

The job, on ``markdown-en`` and ``markdown-zh``: parents of at most 2000 chars cut at the
document's Markdown structure, children of at most 400 chars inside each parent, no overlap;
output = parents AND children, each with its exact start offset in the document.

- spanchunk: ``ParentChildChunker(2000, 400, parent_chunker="markdown")``, measured as
  ``chunk_tree(text)`` (``Chunk`` objects, each with ``metadata["headings"]``) and as
  ``spans(text)`` (integers only).
- semantic-text-splitter ``MarkdownSplitter`` two-level (the peer of the bar): its Markdown
  splitter at 2000 on the document, then at 400 on each parent (``chunk_indices``), the
  children's offsets made document-relative.
- LangChain ``MarkdownTextSplitter`` (recursive splitting with Markdown separators) two-level,
  ``add_start_index``: a reference.

Usage (from the repository root, with the peers installed)::

    python benches/compare_markdown.py [--corpus DIR] [--repeat 5] [--min-sample 0.25]
        [--budget 20] [--out benches/results]

It prints a table of medians in MB/s and writes ``compare-markdown.json`` under ``--out``.
"""

# ruff: noqa: PLC0415 - each peer is imported where it is built, so a missing one is reported

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import compare
from compare import (
    CHILD_SIZE,
    PARENT_SIZE,
    Contender,
    System,
)

FOLDERS = ("markdown-en", "markdown-zh")
MARKDOWN_BAR = 3.0
BAR_PEER = "semantic-text-splitter MarkdownSplitter"


def build_spanchunk_markdown_tree() -> Contender:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="markdown")
    plain = compare.build_spanchunk_tree()

    def job(texts: Sequence[str]) -> list[list[Any]]:
        return [chunker.chunk_tree(text) for text in texts]

    return Contender(job, plain.records, chunker.clear)


def build_spanchunk_markdown_spans() -> Contender:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="markdown")
    plain = compare.build_spanchunk_spans()

    def job(texts: Sequence[str]) -> list[Any]:
        return [chunker.spans(text) for text in texts]

    return Contender(job, plain.records)


def build_semantic_markdown() -> Contender:
    from semantic_text_splitter import MarkdownSplitter

    return compare.build_semantic_text_splitter(MarkdownSplitter)


def build_langchain_markdown() -> Contender:
    from langchain_text_splitters import MarkdownTextSplitter

    return compare.build_langchain(MarkdownTextSplitter)


SYSTEMS = [
    System(
        "spanchunk markdown chunk_tree", None, "char", "spanchunk", build_spanchunk_markdown_tree
    ),
    System("spanchunk markdown spans", None, "char", "spanchunk", build_spanchunk_markdown_spans),
    System(BAR_PEER, "semantic-text-splitter", "char", "peer", build_semantic_markdown),
    System(
        "LangChain MarkdownTextSplitter",
        "langchain-text-splitters",
        "char",
        "reference",
        build_langchain_markdown,
    ),
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=None)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--min-sample", type=float, default=0.25)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument("--out", type=Path, default=compare.DEFAULT_OUT)
    settings = parser.parse_args(argv)
    root = compare.corpus_root(settings.corpus)
    compare.SYSTEMS = SYSTEMS  # the harness times the systems it is given
    figures: dict[str, Any] = {"bar": MARKDOWN_BAR, "folders": {}}
    passed = True
    for folder in FOLDERS:
        texts = compare.load_folder(root / folder, (".md",))
        megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
        print(f"{folder}: {len(texts)} documents, {megabytes:.2f} MB", file=sys.stderr)
        results = compare.measure_folder(texts, settings, lambda line: print(line, file=sys.stderr))
        rows = {}
        print(f"\n| {folder} | MB/s | parents | children | largest parent | offsets exact |")
        print("|---|---:|---:|---:|---:|---|")
        for name, result in results.items():
            speed = compare.mb_s(megabytes, result)
            rows[name] = {"mb_s": speed, "parents": result.parents, "children": result.children}
            print(
                f"| {name} | {compare.figure(speed)} | {result.parents} | {result.children} | "
                f"{result.largest_parent} | {compare.offsets_cell(result)} |"
            )
        ours = rows["spanchunk markdown chunk_tree"]["mb_s"]
        peer = rows[BAR_PEER]["mb_s"]
        ratio = ours / peer if ours and peer else None
        verdict = ratio is not None and ratio >= MARKDOWN_BAR
        passed = passed and verdict
        print(
            f"\nchunk_tree vs {BAR_PEER}: "
            f"{'n/a' if ratio is None else f'{ratio:.1f}x'} (bar >= {MARKDOWN_BAR:.0f}x: "
            f"{'PASS' if verdict else 'FAIL'})\n"
        )
        figures["folders"][folder] = {"megabytes": megabytes, "systems": rows, "ratio": ratio}
    settings.out.mkdir(parents=True, exist_ok=True)
    (settings.out / "compare-markdown.json").write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
