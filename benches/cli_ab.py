"""Two source trees of spanchunk's command line, timed against each other on one host.

``benches/cli.py`` times one build's command line against its bars; this times two trees (a
change and the commit before it, each a folder holding ``python/spanchunk`` with its built
extension) on the same jobs, run after run in turn (A, B, A, B, ...), so that a load that comes
and goes on the host weighs on both alike. Jobs: on the corpus copied ``--copies`` times, JSON
Lines, Parquet and a new store on 2 workers, and a re-run into an unchanged store; on the
Python installation's library folder (``--tree``), JSON Lines, a new store and its re-run.
Best of ``--repeat`` runs each; the report gives both and B's time over A's, and B over A for
the median wall time and the median CPU time (user and system, all threads), which a load
that comes and goes sways less. ``--only`` picks the jobs whose name holds it.

Usage (from the repository root; each tree's extension built in release mode)::

    python benches/cli_ab.py --a /tmp/before --b /tmp/after [--repeat 5] [--only JOB] [--output F]
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
_SPEC = importlib.util.spec_from_file_location("cli_bench", HERE / "cli.py")
assert _SPEC is not None and _SPEC.loader is not None
cli_bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(cli_bench)

ENTRY = "import sys; from spanchunk.cli import main; sys.exit(main())"


def command(tree: Path, *args: str) -> list[str]:
    """The command line of the source tree ``tree`` (its ``python/`` first on the path)."""
    return [
        sys.executable,
        "-c",
        f"import sys; sys.path.insert(0, {str(tree / 'python')!r}); {ENTRY}",
        *args,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="the first tree (before)")
    parser.add_argument("--b", type=Path, required=True, help="the second tree (after)")
    parser.add_argument("--corpus", default=os.environ.get("SPANCHUNK_CORPUS", "../shared/corpus"))
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--tree", default=cli_bench.default_tree())
    parser.add_argument("--output", default=None)
    parser.add_argument(
        "--only", default=None, help="run only the jobs whose name holds this (e.g. 'tree .sqlite')"
    )
    args = parser.parse_args()
    trees = {"A": args.a.resolve(), "B": args.b.resolve()}
    # Bytecode compiled first in both trees, as `pip install` does for an installed package:
    # without it every run compiles the package anew, and a tree with more modules pays more.
    for tree in trees.values():
        compileall.compile_dir(tree / "python" / "spanchunk", quiet=1)
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "in"
        folder.mkdir()
        megabytes = cli_bench.make_folder(Path(args.corpus), args.copies, folder) / 1e6
        library = Path(args.tree)
        text_mb = cli_bench.tree_contents(library)[3] / 1e6
        out = Path(temp)
        jobs = {
            "folder .jsonl": (str(folder), ".jsonl", True, megabytes),
            "folder .parquet": (str(folder), ".parquet", True, megabytes),
            "folder .sqlite, new": (str(folder), ".sqlite", True, megabytes),
            "folder .sqlite, re-run": (str(folder), ".sqlite", False, megabytes),
            "tree .jsonl": (str(library), ".jsonl", True, text_mb),
            "tree .sqlite, new": (str(library), ".sqlite", True, text_mb),
            "tree .sqlite, re-run": (str(library), ".sqlite", False, text_mb),
        }
        if args.only:
            jobs = {job: spec for job, spec in jobs.items() if args.only in job}
        runs: dict[tuple[str, str], list[tuple[float, float]]] = {
            (job, name): [] for job in jobs for name in trees
        }
        # The stores the re-runs update, made once, their files' states old enough to trust.
        for name, tree in trees.items():
            for source, kind in ((str(folder), "folder"), (str(library), "tree")):
                store = out / f"{name}-{kind}-kept.sqlite"
                cli_bench.timed(command(tree, "chunk", source, "-j", "2", "-o", str(store)), 1)
        time.sleep(4)
        for _ in range(args.repeat):
            for job, (source, suffix, fresh, _size) in jobs.items():
                for name, tree in trees.items():
                    kind = "folder" if source == str(folder) else "tree"
                    target = (
                        out / f"{name}-{kind}{suffix}"
                        if fresh
                        else out / f"{name}-{kind}-kept.sqlite"
                    )
                    runs[job, name].append(
                        cli_bench.timed(
                            command(tree, "chunk", source, "-j", "2", "-o", str(target)),
                            1,
                            fresh=fresh,
                        )
                    )
    best = {key: min(wall for wall, _cpu in timings) for key, timings in runs.items()}
    median_wall = {key: statistics.median(w for w, _c in timings) for key, timings in runs.items()}
    median_cpu = {key: statistics.median(c for _w, c in timings) for key, timings in runs.items()}
    lines = [
        "# The command line, two trees against each other",
        "",
        f"A: `{trees['A']}`; B: `{trees['B']}`. Best of {args.repeat} runs each, A and B in "
        "turn, 2 workers, each tree's bytecode compiled first. The folder: the corpus "
        f"{args.copies} times ({megabytes:.0f} MB); "
        f"the tree: `{args.tree}` ({text_mb:.0f} MB of text).",
        "",
        "| job | A s | B s | B / A | B MB/s | B / A, median wall | B / A, median CPU |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for job, (_source, _suffix, _fresh, size) in jobs.items():
        a, b = best[job, "A"], best[job, "B"]
        walls = median_wall[job, "B"] / median_wall[job, "A"]
        cpus = median_cpu[job, "B"] / median_cpu[job, "A"]
        lines.append(
            f"| {job} | {a:.3f} | {b:.3f} | {b / a:.3f} | {size / b:.0f} | {walls:.3f} "
            f"| {cpus:.3f} |"
        )
    for kind in ("folder", "tree"):
        if f"{kind} .sqlite, new" not in jobs or f"{kind} .sqlite, re-run" not in jobs:
            continue
        for name in trees:
            first = best[f"{kind} .sqlite, new", name]
            rerun = best[f"{kind} .sqlite, re-run", name]
            lines.append(f"\n{kind}, {name}: a store's re-run {first / rerun:.1f}x its first run")
    report = "\n".join(lines) + "\n"
    print(report)
    if args.output:
        Path(args.output).write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
