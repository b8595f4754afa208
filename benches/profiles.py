"""Two builds of the core against each other: the engine's speed with the ``pip`` profile (what
``pip install .`` from a clone builds) over the release profile's (the wheels'), same host.

Each tree is a folder holding ``python/spanchunk`` with its built extension (a clone with
``cargo build --profile pip --features python --lib`` copied to ``_core.abi3.so``, and another
with ``--release``). Every job runs in one process per build, the two builds taking turns for
``--rounds`` rounds of ``--passes`` passes each, so a load that comes and goes on the host weighs
on both alike; the best pass of each counts. The engine's jobs: ``ParentChildChunker(2000,
400)``'s ``chunk_tree`` and ``spans`` on every folder of the corpus, token children
(``cl100k_base``, and a HuggingFace ``tokenizer.json``), and ``CodeChunker`` on the
repository's own Rust and Python sources. Reported beside them, outside the engine: the
command line writing Parquet and a new SQLite store, and ``ChunkBatches``'s Arrow tables.

Usage (from the repository root)::

    python benches/profiles.py --a /tmp/release-tree --b /tmp/pip-tree [--rounds 12]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent

#: One job in a process of its own: the tree's package first on the path, then the best of
#: ``passes`` passes, printed as seconds.
JOB = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(1, sys.argv[2])
from throughput import load_folder
from pathlib import Path
import spanchunk
from spanchunk import CodeChunker, ParentChildChunker
job, corpus, passes = sys.argv[3], Path(sys.argv[4]), int(sys.argv[5])
kind, _, folder = job.partition(":")
if kind == "arrow":
    # Ray Data's and Spark's batch function: chunks laid out as Arrow buffers by the core.
    import pyarrow as pa
    from spanchunk.integrations.ray import ChunkBatches
    texts = load_folder(corpus / folder)
    size = sum(len(t.encode("utf-8")) for t in texts)
    table = pa.table({"id": [str(n) for n in range(len(texts))], "text": texts})
    batches = ChunkBatches(2000, 400)
    best = float("inf")
    for _ in range(passes):
        started = time.perf_counter()
        batches(table)
        best = min(best, time.perf_counter() - started)
    print(size / best / 1e6)
    raise SystemExit
if kind == "cli":
    # The command line's outputs, outside the engine: Parquet (the arrow-rs writer) and a new
    # SQLite store (the bundled SQLite), on 2 workers, each pass into a new file.
    import os, tempfile
    from spanchunk.cli import main
    source = corpus / "gutenberg"
    size = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
    suffix = {"parquet": ".parquet", "store": ".sqlite"}[folder]
    scratch = tempfile.mkdtemp()
    best = float("inf")
    for n in range(passes):
        out = os.path.join(scratch, f"out{n}{suffix}")
        started = time.perf_counter()
        assert main(["chunk", str(source), "-o", out, "--workers", "2"]) == 0
        best = min(best, time.perf_counter() - started)
        os.remove(out)
    print(size / best / 1e6)
    raise SystemExit
if kind == "code":
    language = folder
    suffix = {"rust": ".rs", "python": ".py"}[language]
    root = Path(sys.argv[6]) / ("rust" if language == "rust" else "python")
    texts = [p.read_text(encoding="utf-8") for p in sorted(root.rglob("*" + suffix))]
    chunker = CodeChunker(1000, language=language)
    run = lambda: [chunker.chunk(t) for t in texts]
else:
    texts = load_folder(corpus / folder)
    if kind == "hf":
        # A HuggingFace tokenizer.json (the tokenizers crate's model and pre-tokenizer).
        tokenizer = Path(sys.argv[6]) / "tests/corpus/tokenizers/all-MiniLM-L6-v2/tokenizer.json"
        chunker = ParentChildChunker(512, 128, unit="token", tokenizer=str(tokenizer))
        run = lambda: [chunker.spans(t) for t in texts]
    elif kind == "tokens":
        chunker = ParentChildChunker(1024, 256, unit="token", encoding="cl100k_base")
        run = lambda: [chunker.spans(t) for t in texts]
    elif kind == "spans":
        chunker = ParentChildChunker(2000, 400)
        run = lambda: [chunker.spans(t) for t in texts]
    else:
        chunker = ParentChildChunker(2000, 400)
        def run():
            out = [chunker.chunk_tree(t) for t in texts]
            chunker.clear()
            return out
size = sum(len(t.encode("utf-8")) for t in texts)
best = float("inf")
for _ in range(passes):
    started = time.perf_counter()
    run()
    best = min(best, time.perf_counter() - started)
print(size / best / 1e6)
"""

JOBS = (
    "tree:gutenberg",
    "spans:gutenberg",
    "tree:markdown-en",
    "spans:markdown-en",
    "tree:markdown-zh",
    "spans:markdown-zh",
    "tokens:gutenberg",
    "hf:gutenberg",
    "code:rust",
    "code:python",
)

#: The command line's writers, outside the engine: reported, not in the engine's mean.
OUTPUTS = ("cli:parquet", "cli:store", "arrow:gutenberg")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="the first tree (release)")
    parser.add_argument("--b", type=Path, required=True, help="the second tree (pip)")
    parser.add_argument("--corpus", default=str(REPOSITORY.parent / "shared" / "corpus"))
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    best: dict[tuple[str, str], float] = {}
    for _ in range(args.rounds):
        for job in JOBS + OUTPUTS:
            for name, tree in (("a", args.a), ("b", args.b)):
                done = subprocess.run(
                    [
                        sys.executable,
                        "-c",
                        JOB,
                        str(tree.resolve() / "python"),
                        str(REPOSITORY / "benches"),
                        job,
                        args.corpus,
                        str(args.passes),
                        str(REPOSITORY),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                rate = float(done.stdout.strip())
                best[job, name] = max(best.get((job, name), 0.0), rate)
    lines = [
        "# Two builds of the core, the engine's speed",
        "",
        f"A: `{args.a}`; B: `{args.b}`. Best of {args.rounds} rounds of {args.passes} passes, "
        "A and B in turn, one process per job and build.",
        "",
        "| job | A MB/s | B MB/s | B / A |",
        "|---|---:|---:|---:|",
    ]
    ratios = []
    for job in JOBS:
        a, b = best[job, "a"], best[job, "b"]
        ratios.append(b / a)
        lines.append(f"| {job} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
    product = 1.0
    for ratio in ratios:
        product *= ratio
    lines.append(
        f"\ngeometric mean B / A: {product ** (1 / len(ratios)):.3f}; worst: {min(ratios):.3f}"
    )
    lines += [
        "",
        "Outside the engine, on the corpus's gutenberg folder (MB/s of input): the command "
        "line's writers on 2 workers, and ``ChunkBatches`` (Arrow buffers, one thread):",
        "",
        "| job | A MB/s | B MB/s | B / A |",
        "|---|---:|---:|---:|",
    ]
    for job in OUTPUTS:
        a, b = best[job, "a"], best[job, "b"]
        lines.append(f"| {job} | {a:.1f} | {b:.1f} | {b / a:.3f} |")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")
        Path(args.output).with_suffix(".json").write_text(
            json.dumps({f"{job} {name}": rate for (job, name), rate in best.items()}, indent=1)
        )


if __name__ == "__main__":
    main()
