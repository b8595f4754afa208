"""spanchunk against its peers, printed as Markdown tables, one section per job.

Section ``tokens`` (the token-unit bars of docs/performance.md): parent-child chunking with
parents of 1024 and children of 256 tokens, over each folder of the corpus, for two tokenizers:

- ``o200k_base`` (tiktoken, compiled into spanchunk's core; the peer is
  ``semantic_text_splitter.TextSplitter.from_tiktoken_model("gpt-4o", ...)``);
- the shipped HuggingFace ``all-MiniLM-L6-v2/tokenizer.json`` (the peer is
  ``TextSplitter.from_huggingface_tokenizer_str`` on the same JSON, truncation and padding
  switched off, as spanchunk does on load).

Each row gives the median time of spanchunk's ``chunk_tree`` (``Chunk`` objects with exact
spans for parents and children), of the peer doing the same job two-level (``chunk_indices``
for parents, then for the children of each parent), their ratio (bar >= 3x), and the ratio of
spanchunk's time to one plain encoding of every document with the same tokenizer
(``Splitter.measure``: tiktoken-rs's ``count_ordinary``, or the ``tokenizers`` crate's
``encode_fast``, nothing kept between calls; bar <= 2x). Chunking keeps the counts of merged
pieces and words per tokenizer while it runs; every timed run starts with none kept
(``_core.forget_token_counts()``), so each folder is chunked as a fresh process would chunk it.
A last table gives ``chunk_many`` in token units on 2 worker threads against 1 (bar >= 1.7x).

Usage (from the repository root, spanchunk and semantic-text-splitter installed)::

    python benches/compare_tokens.py [--corpus DIR] [--repeat 3] [--section tokens]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from collections.abc import Callable
from pathlib import Path

import spanchunk
from semantic_text_splitter import TextSplitter
from spanchunk import ParentChildChunker, _core

# benches/ is on sys.path when this file runs as a script: the harness is throughput.py's.
from throughput import corpus_root, load_folder, median_seconds

PARENT_TOKENS = 1024
CHILD_TOKENS = 256
BARS = {"speedup": 3.0, "encode_ratio": 2.0, "threads": 1.7}


def _nothing() -> None:
    pass


def _start_cold(chunker: ParentChildChunker) -> None:
    """Between runs: empty the registry and drop the token counts the core keeps per
    tokenizer, so every timed run counts each folder from nothing, as a fresh process would."""
    chunker.clear()
    _core.forget_token_counts()


def _verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def _tokenizer_file(root: Path) -> Path:
    return root.parent / "tokenizers" / "all-MiniLM-L6-v2" / "tokenizer.json"


def _peer_json(path: Path) -> str:
    """The tokenizer's JSON with truncation and padding off, as spanchunk counts."""
    content = json.loads(path.read_text(encoding="utf-8"))
    content["truncation"] = None
    content["padding"] = None
    return json.dumps(content)


def _two_level_peer(parent: object, child: object) -> Callable[[list[str]], object]:
    def job(texts: list[str]) -> object:
        out = []
        for text in texts:
            for parent_offset, parent_text in parent.chunk_indices(text):  # type: ignore[attr-defined]
                out.append((parent_offset, len(parent_text)))
                out.extend(
                    (parent_offset + offset, len(child_text))
                    for offset, child_text in child.chunk_indices(parent_text)  # type: ignore[attr-defined]
                )
        return out

    return job


def tokens_section(root: Path, repeat: int) -> int:
    """The token-unit tables; returns the number of bars missed."""
    tokenizer = _tokenizer_file(root)
    tokenizers: dict[str, tuple[dict[str, object], Callable[[int], object]]] = {
        "o200k_base": (
            {"encoding": "o200k_base"},
            lambda size: TextSplitter.from_tiktoken_model("gpt-4o", size),
        ),
    }
    if tokenizer.is_file():
        peer_json = _peer_json(tokenizer)
        tokenizers["all-MiniLM-L6-v2"] = (
            {"tokenizer": tokenizer},
            lambda size: TextSplitter.from_huggingface_tokenizer_str(peer_json, size),
        )
    else:
        print(f"(no tokenizer at {tokenizer}: the HuggingFace rows are left out)")
    folders = sorted(path for path in root.iterdir() if path.is_dir() and path.name[0] != ".")
    corpus = {folder.name: load_folder(folder) for folder in folders}

    print(
        f"## tokens: ParentChildChunker({PARENT_TOKENS}, {CHILD_TOKENS}, unit='token') vs "
        f"semantic-text-splitter two-level, median of {repeat}"
    )
    print()
    print(
        "| corpus | tokenizer | MB | spanchunk s | peer s | speedup (>= 3x) "
        "| encode s | chunking / encoding (<= 2x) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    missed = 0
    for name, texts in corpus.items():
        megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
        for label, (settings, peer_of) in tokenizers.items():
            chunker = ParentChildChunker(PARENT_TOKENS, CHILD_TOKENS, unit="token", **settings)  # type: ignore[arg-type]
            counter = _core.Splitter(
                1,
                unit="token",
                encoding=settings.get("encoding"),  # type: ignore[arg-type]
                tokenizer_json=(
                    Path(settings["tokenizer"]).read_text(encoding="utf-8")  # type: ignore[arg-type]
                    if "tokenizer" in settings
                    else None
                ),
            )
            ours = median_seconds(
                lambda chunker=chunker, texts=texts: [chunker.chunk_tree(t) for t in texts],
                repeat,
                lambda chunker=chunker: _start_cold(chunker),
            )
            encode = median_seconds(
                lambda counter=counter, texts=texts: [counter.measure(t) for t in texts],
                repeat,
                _nothing,
            )
            peer_job = _two_level_peer(peer_of(PARENT_TOKENS), peer_of(CHILD_TOKENS))
            peer = median_seconds(lambda job=peer_job, texts=texts: job(texts), repeat, _nothing)
            speedup, ratio = peer / ours, ours / encode
            missed += (speedup < BARS["speedup"]) + (ratio > BARS["encode_ratio"])
            print(
                f"| {name} | {label} | {megabytes:.2f} | {ours:.3f} | {peer:.3f} "
                f"| {speedup:.1f}x {_verdict(speedup >= BARS['speedup'])} | {encode:.3f} "
                f"| {ratio:.2f}x {_verdict(ratio <= BARS['encode_ratio'])} |",
                flush=True,
            )

    everything = [text for texts in corpus.values() for text in texts]
    chunker = ParentChildChunker(PARENT_TOKENS, CHILD_TOKENS, unit="token", encoding="o200k_base")
    one = median_seconds(
        lambda: chunker.chunk_many(everything, workers=1), repeat, lambda: _start_cold(chunker)
    )
    two = median_seconds(
        lambda: chunker.chunk_many(everything, workers=2), repeat, lambda: _start_cold(chunker)
    )
    scaling = one / two
    missed += scaling < BARS["threads"]
    print()
    print("| job | 1 worker s | 2 workers s | speedup (>= 1.7x) |")
    print("|---|---:|---:|---:|")
    print(
        f"| chunk_many, o200k_base, whole corpus ({len(everything)} documents) | {one:.3f} "
        f"| {two:.3f} | {scaling:.2f}x {_verdict(scaling >= BARS['threads'])} |"
    )
    return missed


SECTIONS: dict[str, Callable[[Path, int], int]] = {"tokens": tokens_section}


def main(argv: list[str] | None = None) -> int:
    """Run the chosen sections and print their tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", metavar="DIR", help="corpus folder (one row per sub-folder)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    parser.add_argument("--section", choices=sorted(SECTIONS), action="append")
    args = parser.parse_args(argv)
    root = corpus_root(args.corpus)
    if not root.is_dir():
        print(f"compare: no corpus at {root}; pass --corpus DIR", file=sys.stderr)
        return 1
    print(
        f"spanchunk {spanchunk.__version__}, Python {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} CPUs"
    )
    print()
    missed = sum(SECTIONS[section](root, args.repeat) for section in args.section or SECTIONS)
    print()
    print(f"bars missed: {missed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
