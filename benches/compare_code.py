"""Source code as a structure, measured on the Python standard library of this machine.

The job, on every ``.py`` file of the standard library (``site-packages`` left out): parents
of at most 2000 chars cut at the code's structure, children of at most 400 chars inside each
parent, no overlap; output = parents AND children, each with its exact start offset.

- spanchunk: ``ParentChildChunker(2000, 400, parent_chunker="code", language="python")``,
  ``chunk_tree(text)`` (``Chunk`` objects, each with ``metadata["symbols"]``).
- semantic-text-splitter ``CodeSplitter`` two-level, with the same tree-sitter grammar
  (the ``tree-sitter-python`` package): 2000 on the file, then 400 on each parent
  (``chunk_indices``), the children's offsets made file-relative.

Both are timed in the same run, in turns (best of ``--repeat``), after a check that every
chunk is the text at its offset. Also reported: the share of parents that start at a
definition boundary by Python's ``ast`` (the first line of a function or class, its
decorators included, or of the comment lines right above it); the throughput of the command
line (``spanchunk chunk``, 2 workers, JSON Lines) on the same files with code parents
(``--format code``) and as plain text (``--format text``); and the chunking contract
(``tests/_contract.py``) over every file, with the symbol paths checked against ``ast``.

Usage (from the repository root, a release build installed, the ``bench`` extra too)::

    python benches/compare_code.py [--repeat 3] [--out benches/results]

It prints the figures and writes ``compare-code.md`` and ``compare-code.json`` under ``--out``.
"""

# ruff: noqa: PLC0415 - each peer is imported where it is built, so a missing one is reported

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from machine_info import REPOSITORY, cpu_model, git_commit, version_of

PARENT_SIZE = 2000
CHILD_SIZE = 400
SPEED_BAR = 3.0
STRUCTURE_COST_BAR = 2.0
# (is a parent, start char, text)
Record = tuple[bool, int, str]


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(
        path
        for path in root.rglob("*.py")
        if "site-packages" not in path.parts and path.is_file() and not path.is_symlink()
    )


def read_all(files: Sequence[Path]) -> list[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in files]


# ------------------------------------------------------------------------------- contenders


def spanchunk_job() -> Callable[[Sequence[str]], list[list[Record]]]:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="code", language="python")

    def job(texts: Sequence[str]) -> list[list[Record]]:
        out = []
        for text in texts:
            tree = chunker.chunk_tree(text)
            out.append([(chunk.level == 1, chunk.start_char, chunk.text) for chunk in tree])
        chunker.clear()
        return out

    return job


def spanchunk_spans_job() -> Callable[[Sequence[str]], list[list[Record]]]:
    """The same cut as integers only (``spans``): the records are made from the array after
    the clock, for the check."""
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="code", language="python")

    def job(texts: Sequence[str]) -> list[Any]:
        return [chunker.spans(text) for text in texts]

    return job


def span_records(texts: Sequence[str], arrays: Sequence[Any]) -> list[list[Record]]:
    return [
        [
            (
                int(row["level"]) == 1,
                int(row["start_char"]),
                text[row["start_char"] : row["end_char"]],
            )
            for row in array
        ]
        for text, array in zip(texts, arrays, strict=True)
    ]


def code_splitter_job() -> Callable[[Sequence[str]], list[list[Record]]]:
    import tree_sitter_python
    from semantic_text_splitter import CodeSplitter

    parent_splitter = CodeSplitter(tree_sitter_python.language(), PARENT_SIZE)
    child_splitter = CodeSplitter(tree_sitter_python.language(), CHILD_SIZE)

    def job(texts: Sequence[str]) -> list[list[Record]]:
        out = []
        for text in texts:
            rows: list[Record] = []
            for parent_start, parent_text in parent_splitter.chunk_indices(text):
                rows.append((True, parent_start, parent_text))
                for child_start, child_text in child_splitter.chunk_indices(parent_text):
                    rows.append((False, parent_start + child_start, child_text))
            out.append(rows)
        return out

    return job


def outline_job() -> Callable[[Sequence[str]], None]:
    """The structure alone: one tree-sitter parse and the walk that makes the outline, per
    file, on one thread (``_core.Outline.code``). No job with code parents can be faster, so
    this bounds the command line's code run at this speed times its workers."""
    from spanchunk import _core

    def job(texts: Sequence[str]) -> None:
        for text in texts:
            _core.Outline.code(text, "python")

    return job


def check_exact(texts: Sequence[str], results: Sequence[list[Record]], name: str) -> None:
    for text, rows in zip(texts, results, strict=True):
        for _parent, start, piece in rows:
            if text[start : start + len(piece)] != piece:
                raise SystemExit(f"{name}: a chunk is not the text at its offset ({start})")


def timed(job: Callable[[Sequence[str]], Any], texts: Sequence[str]) -> float:
    started = time.perf_counter()
    job(texts)
    return time.perf_counter() - started


# ------------------------------------------------------------------------------- boundaries


def definition_lines(text: str) -> set[int] | None:
    """The 0-based lines a definition starts on by ``ast``: its first decorator's, or its
    own, and the comment lines right above it (None: the file does not parse)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    lines = text.split("\n")
    starts: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            starts.add(first)
            above = first - 1
            while above >= 0 and lines[above].lstrip().startswith("#"):
                starts.add(above)
                above -= 1
    return starts


def boundary_share(texts: Sequence[str], results: Sequence[list[Record]]) -> tuple[int, int]:
    """(parents at a definition boundary, parents) over the files ``ast`` parses."""
    at_boundary = parents = 0
    for text, rows in zip(texts, results, strict=True):
        starts = definition_lines(text)
        if starts is None:
            continue
        line_of = _line_finder(text)
        for is_parent, start, piece in rows:
            if not is_parent:
                continue
            parents += 1
            first = start + (len(piece) - len(piece.lstrip()))
            at_boundary += line_of(first) in starts
    return at_boundary, parents


def _line_finder(text: str) -> Callable[[int], int]:
    import bisect

    newlines = [position for position, char in enumerate(text) if char == "\n"]
    return lambda offset: bisect.bisect_left(newlines, offset)


# ------------------------------------------------------------------------------- CLI, contract


def cli_throughput(files: Sequence[Path], repeat: int) -> dict[str, float]:
    """MB/s of ``spanchunk chunk`` (2 workers, JSON Lines, whole process) on a copy of the
    files, with code parents and as plain text."""
    total = sum(path.stat().st_size for path in files)
    root = Path(sysconfig.get_paths()["stdlib"])
    figures = {}
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "stdlib"
        for path in files:
            target = tree / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        out = Path(scratch) / "out.jsonl"
        for name, fmt in (("code", "code"), ("text", "text")):
            best = float("inf")
            for _ in range(repeat):
                command = [sys.executable, "-m", "spanchunk", "chunk", str(tree), "--workers",
                           "2", "--format", fmt, "-o", str(out)]  # fmt: skip
                started = time.perf_counter()
                subprocess.run(command, check=True, capture_output=True)
                best = min(best, time.perf_counter() - started)
            figures[name] = total / best / 1e6
    return figures


def contract_over_every_file(files: Sequence[Path], texts: Sequence[str]) -> dict[str, Any]:
    """The contract (every level of every file) and the symbol paths against ``ast``."""
    sys.path.insert(0, str(REPOSITORY / "tests"))
    from _contract import TextInfo, check_chunks, parent_child_levels
    from spanchunk import ParentChildChunker, _core
    from test_code import check_symbols_against_ast

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="code", language="python")
    spec = parent_child_levels(PARENT_SIZE, CHILD_SIZE)
    # Files ast parses with definitions, of which the grammar's error recovery left more
    # than half in errors: cut as plain text, without symbols.
    unparsed: list[str] = []
    in_plain_files = 0
    chunks = violations = symbols_checked = 0
    symbol_disagreements: list[str] = []
    at_comments = 0
    failures: list[str] = []
    for path, text in zip(files, texts, strict=True):
        tree = chunker.chunk_tree(text)
        chunks += len(tree)
        try:
            check_chunks(text, tree, spec, "char", info=TextInfo(text))
        except AssertionError as error:
            violations += 1
            failures.append(f"{path}: {str(error)[:200]}")
        try:
            module = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        has_definitions = any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            for node in ast.walk(module)
        )
        plain = has_definitions and not _core.Outline.code(text, "python").headings
        if plain:
            unparsed.append(path.name)
        checked, wrong, comments = check_symbols_against_ast(text, tree)
        in_plain_files += len(wrong) if plain else 0
        symbols_checked += checked
        symbol_disagreements += [f"{path.name}: {line}" for line in wrong]
        at_comments += len(comments)
        chunker.clear()
    return {
        "files": len(files),
        "chunks": chunks,
        "files_with_violations": violations,
        "violations": failures[:20],
        "symbol_paths_checked": symbols_checked,
        "symbol_paths_disagreeing": len(symbol_disagreements),
        "symbol_disagreements": symbol_disagreements[:20],
        "symbol_paths_disagreeing_at_a_comment": at_comments,
        "files_cut_as_plain_text": unparsed,
        "symbol_paths_disagreeing_in_those_files": in_plain_files,
    }


# ------------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPOSITORY / "benches" / "results")
    parser.add_argument("--skip-contract", action="store_true")
    args = parser.parse_args(argv)

    files = stdlib_files()
    texts = read_all(files)
    megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
    print(f"{len(files)} files, {megabytes:.1f} MB", flush=True)

    contenders = {
        "spanchunk": spanchunk_job(),
        "spanchunk spans": spanchunk_spans_job(),
        "CodeSplitter": code_splitter_job(),
    }
    results = {name: job(texts) for name, job in contenders.items()}
    results["spanchunk spans"] = span_records(texts, results["spanchunk spans"])
    for name, rows in results.items():
        check_exact(texts, rows, name)
    seconds = {name: float("inf") for name in contenders}
    for _ in range(args.repeat):
        for name, job in contenders.items():
            seconds[name] = min(seconds[name], timed(job, texts))
    outline_seconds = min(timed(outline_job(), texts) for _ in range(args.repeat))
    speed = {name: megabytes / seconds[name] for name in contenders}
    ratio = seconds["CodeSplitter"] / seconds["spanchunk"]
    spans_ratio = seconds["CodeSplitter"] / seconds["spanchunk spans"]
    shares = {}
    for name, rows in results.items():
        at_boundary, parents = boundary_share(texts, rows)
        shares[name] = {"at_boundary": at_boundary, "parents": parents}
        print(f"{name}: {speed[name]:.2f} MB/s, {at_boundary}/{parents} parents at a "
              "definition", flush=True)  # fmt: skip
    print(f"ratio: {ratio:.2f}x, spans {spans_ratio:.2f}x (bar >= {SPEED_BAR}x)", flush=True)
    cli = cli_throughput(files, args.repeat)
    cli["outline"] = megabytes / outline_seconds
    print(f"CLI: code {cli['code']:.1f} MB/s, text {cli['text']:.1f} MB/s; the outline alone "
          f"{cli['outline']:.1f} MB/s on one thread", flush=True)  # fmt: skip
    contract = None if args.skip_contract else contract_over_every_file(files, texts)
    if contract:
        print(json.dumps({k: v for k, v in contract.items() if not isinstance(v, list)}))

    report = {
        "machine": cpu_model(),
        "commit": git_commit(),
        "versions": {
            name: version_of(name)
            for name in ("spanchunk", "semantic-text-splitter", "tree-sitter-python")
        },
        "files": len(files),
        "megabytes": megabytes,
        "seconds": seconds,
        "mb_per_s": speed,
        "ratio": ratio,
        "spans_ratio": spans_ratio,
        "definition_boundary": shares,
        "cli_mb_per_s": cli,
        "contract": contract,
        "load_average": os.getloadavg()[0],
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare-code.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "compare-code.md").write_text(markdown(report))
    return 0


def markdown(report: dict[str, Any]) -> str:
    speed, shares, cli = report["mb_per_s"], report["definition_boundary"], report["cli_mb_per_s"]

    def share(name: str) -> str:
        found = shares[name]
        return f"{100 * found['at_boundary'] / max(found['parents'], 1):.1f}% " + (
            f"({found['at_boundary']} of {found['parents']})"
        )

    lines = [
        "# Source code: code parents on the Python standard library",
        "",
        f"`benches/compare_code.py` on {report['files']} `.py` files of the standard library "
        f"({report['megabytes']:.1f} MB), {report['machine']}, commit {report['commit']}; "
        f"versions {report['versions']}. Parents 2000 chars, children 400, exact offsets; "
        "best of the runs, both systems in turns in one process; load average "
        f"{report['load_average']:.1f} at the end (other jobs share the machine's cores).",
        "",
        "| system | MB/s | parents at a definition boundary (by `ast`) |",
        "|---|---|---|",
        f'| spanchunk `ParentChildChunker(parent_chunker="code")`, `chunk_tree` | '
        f"{speed['spanchunk']:.2f} | {share('spanchunk')} |",
        f"| spanchunk, the same cut as integers (`spans`) | {speed['spanchunk spans']:.2f} | "
        f"{share('spanchunk spans')} |",
        f"| semantic-text-splitter `CodeSplitter` two-level | {speed['CodeSplitter']:.2f} | "
        f"{share('CodeSplitter')} |",
        "",
        f"spanchunk is **{report['ratio']:.2f}x** `CodeSplitter` with `Chunk` objects, "
        f"**{report['spans_ratio']:.2f}x** with spans only (bar: >= {SPEED_BAR}x). Both parse "
        "with tree-sitter; spanchunk parses a file once for both levels, `CodeSplitter` twice "
        "(the file, then each parent). The parse is four fifths of spanchunk's time "
        "(`benches/NOTES.md`).",
        "",
        f"The command line (`spanchunk chunk`, 2 workers, JSON Lines, whole process) on the "
        f"same files: **{cli['code']:.1f} MB/s** with code parents (`--format code`), "
        f"**{cli['text']:.1f} MB/s** as plain text (`--format text`): the structure costs "
        f"{cli['text'] / cli['code']:.2f}x (bar: at most {STRUCTURE_COST_BAR}x). The outline "
        f"alone (the tree-sitter parse and its walk, `_core.Outline.code`, one thread) runs at "
        f"{cli['outline']:.1f} MB/s: no code run on 2 workers can pass "
        f"{2 * cli['outline']:.1f} MB/s, so the structure costs at least "
        f"{cli['text'] / (2 * cli['outline']):.2f}x on this machine whatever is done after the "
        "parse.",
        "",
    ]
    contract = report["contract"]
    if contract:
        lines += [
            f"The contract over every file: {contract['files']} files, {contract['chunks']} "
            f"chunks (parents and children), {contract['files_with_violations']} files with a "
            f"violation. Symbol paths against `ast`: {contract['symbol_paths_checked']} "
            f"chunks checked, {contract['symbol_paths_disagreeing']} disagreeing among those "
            "that start at code, "
            f"{contract['symbol_paths_disagreeing_at_a_comment']} among those that start at a "
            "comment indented into the block above it (the grammar keeps it in that block, "
            "`ast` ends the block at its last statement). Files that `ast` parses but whose "
            "parse tree-sitter's error recovery leaves mostly in errors, cut as plain text "
            f"without symbols: {', '.join(contract['files_cut_as_plain_text']) or 'none'} "
            f"({contract['symbol_paths_disagreeing_in_those_files']} of the disagreements "
            "among chunks that start at code).",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
