"""Children worth retrieving: how many children of the structure modes are only a heading, a
signature or a closing delimiter, on real trees, before and after a change, in one run.

The trees are ones every machine with this repository's toolchain has:

- ``markdown``: the Markdown files of the cargo registry (``~/.cargo/registry/src``);
- ``rust``, ``c``: the Rust and C sources of the cargo registry;
- ``python``: the Python files of the interpreter's ``site-packages`` (this venv's).

Files over ``--largest`` bytes (generated parsers, tables) are left out; a tree over
``--budget`` MB is sampled, every k-th file in sorted order, so every run reads the same files.

The job: ``ParentChildChunker(2000, 400, parent_chunker="markdown")`` for Markdown,
``parent_chunker="code"`` (the language read from each file's name) for code. Over the
children (level 0) it counts:

- ``heading only``: a child whose text is one heading (Markdown: an ATX heading line or a
  setext heading) or, in code, only signatures with their decorators, attributes and
  comments (``def f(self):``, ``@property``, ``impl Debug for X {``);
- ``closing only``: a child that is only closing delimiters (``}``, ``)``, ``]``, ``end``,
  with ``;`` and ``,``), as the lone ``}`` of a block;
- ``under 50``: a child of fewer than 50 chars (trimmed);
- ``lead at end``: a child that ends with a heading, a signature or a decorator, when the
  next child starts right after it: what the line leads is in the next child. A signature is
  the statement that ends the child, back to the line after one that ends a statement, when
  it ends with ``{`` or ``:`` and its first line opens a definition (``fn``, ``impl``,
  ``def``, ``class``, ``function``, ``func``, ... or a C function's type and name).

The patterns are the bench's yardstick, the same for every build, not the engine's rule
(which reads the parse of each file).

``--before PYTHONPATH`` runs the same count with the spanchunk found there (another build)
in a child process, and the table shows both columns; without it, one column.

Usage (from the repository root)::

    python benches/quality.py [--before PATH [--before-name NAME]] [--name NAME] [--budget MB]
        [--out benches/results]

Writes ``quality.md`` and ``quality.json`` in ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import spanchunk
from spanchunk import Document, ParentChildChunker

REPOSITORY = Path(__file__).resolve().parent.parent
PARENT_SIZE, CHILD_SIZE = 2000, 400
SHORT = 50

#: An ATX heading line, or a setext heading (its text and its underline).
HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t][^\n]*)?$|^[^\n]+\n {0,3}(?:=+|-+)[ \t]*$")
#: A decorator or attribute line.
DECORATOR = re.compile(r"^\s*(?:@[\w.]+(?:\(.*\))?|#!?\[.*\])\s*$")
#: A comment line (doc comments above a definition go with it).
COMMENT = re.compile(r"^\s*(?://|/\*|\*|#(?![!\[]))")
#: The first line of a definition's signature, in the languages of the trees.
DEFINITION = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?"
    r"(?:(?:async|const|unsafe|extern(?:\s+\"[^\"]*\")?|default|static|export|public|private"
    r"|protected|final|abstract|inline)\s+)*"
    r"(?:fn|impl|trait|struct|enum|mod|union|def|class|function|interface|func|namespace)\b"
    # A C function at the top level: a type, a name, an open parenthesis.
    r"|^(?!(?:if|for|while|switch|else|do|return)\b)[A-Za-z_][\w \t*]*\b[A-Za-z_]\w*\s*\("
)
#: Only closing delimiters, with separators between them.
CLOSING = re.compile(r"^(?:[\s;,]|[}\])]|\bend\b)+$")


def lead_start(lines: list[str]) -> int | None:
    """Where the signature that ends ``lines`` begins, with the decorators, attributes and
    comments right above it; None when the last line ends no signature."""
    last = lines[-1].rstrip()
    if DECORATOR.match(last):
        start = len(lines) - 1
    elif last.endswith(("{", ":")):
        # Back over the signature's lines: up to the line after one that ends a statement.
        start = len(lines) - 1
        while start > 0:
            above = lines[start - 1].rstrip()
            if not above.strip() or above.endswith((";", "{", "}", ":")) or COMMENT.match(above):
                break
            if DECORATOR.match(above):
                break
            start -= 1
        if not DEFINITION.match(lines[start]):
            return None
    else:
        return None
    while start > 0:
        above = lines[start - 1]
        nested = DEFINITION.match(above) and above.rstrip().endswith(("{", ":"))
        if not (DECORATOR.match(above) or COMMENT.match(above) or nested):
            break
        start -= 1
    return start


def ends_with_lead(text: str, structure: str) -> bool:
    """Whether the child ``text`` (trimmed) ends with a heading, a signature or a decorator."""
    lines = text.split("\n")
    if structure == "markdown":
        tail = "\n".join(lines[-2:]) if len(lines) >= 2 else lines[-1]
        return HEADING.match(lines[-1]) is not None or (
            re.match(r"^ {0,3}(?:=+|-+)\s*$", lines[-1]) is not None
            and HEADING.match(tail) is not None
        )
    return lead_start(lines) is not None


def only_lead(text: str, structure: str) -> bool:
    """Whether the child ``text`` (trimmed) is one heading, or a signature with its
    decorators, attributes and comments, alone."""
    if structure == "markdown":
        return HEADING.match(text) is not None
    return lead_start(text.split("\n")) == 0


# -- the trees ---------------------------------------------------------------------------------


def registry() -> Path:
    return Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo")) / "registry" / "src"


def trees() -> dict[str, tuple[str, list[Path]]]:
    """Per tree: its structure and its files, sorted."""
    site = Path(sysconfig.get_paths()["purelib"])
    found: dict[str, tuple[str, list[Path]]] = {
        "markdown": ("markdown", sorted(registry().glob("*/**/*.md"))),
        "rust": ("code", sorted(registry().glob("*/**/*.rs"))),
        "c": ("code", sorted([*registry().glob("*/**/*.c"), *registry().glob("*/**/*.h")])),
        "python": ("code", sorted(site.glob("**/*.py"))),
    }
    return found


def sample(paths: list[Path], budget: int, largest: int) -> Iterator[tuple[Path, str]]:
    """Every k-th file of ``paths`` (UTF-8, at most ``largest`` bytes), about ``budget`` bytes
    in all."""
    sizes = []
    for path in paths:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        if 0 < size <= largest:
            sizes.append((path, size))
    total = sum(size for _, size in sizes)
    step = max(1, -(-total // budget)) if budget > 0 else 1
    for path, _ in sizes[::step]:
        try:
            yield path, path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


# -- the count ---------------------------------------------------------------------------------


def count(structure: str, files: list[tuple[str, str]]) -> dict[str, int]:
    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker=structure)
    figures = dict.fromkeys(
        ("files", "chars", "children", "heading only", "closing only", "under 50", "lead at end"),
        0,
    )
    for name, text in files:
        children = chunker.chunk(Document(text, source=name))
        figures["files"] += 1
        figures["chars"] += len(text)
        figures["children"] += len(children)
        for child, following in zip(children, [*children[1:], None], strict=True):
            body = child.text.strip()
            figures["heading only"] += only_lead(body, structure)
            figures["closing only"] += CLOSING.match(body) is not None
            figures["under 50"] += len(body) < SHORT
            if following is not None and ends_with_lead(body, structure):
                between = text[child.end_char : following.start_char]
                figures["lead at end"] += between.strip() == ""
    return figures


def measure(budget: int, largest: int) -> dict[str, Any]:
    """The figures of every tree with the spanchunk this process imports."""
    results: dict[str, Any] = {"spanchunk": str(Path(spanchunk.__file__).parent), "trees": {}}
    for name, (structure, paths) in trees().items():
        files = [(str(path), text) for path, text in sample(paths, budget, largest)]
        started = time.perf_counter()
        figures = count(structure, files)
        figures["seconds"] = round(time.perf_counter() - started, 1)
        results["trees"][name] = figures
        print(f"{name}: {figures}", file=sys.stderr)
    return results


# -- the report --------------------------------------------------------------------------------

ROWS = ("children", "heading only", "closing only", "under 50", "lead at end")


def share(value: int, total: int) -> str:
    return f"{value:,} ({100 * value / total:.1f}%)" if total else f"{value:,}"


def report(runs: dict[str, dict[str, Any]], budget: int) -> str:
    labels = list(runs)
    lines = [
        "## Children worth retrieving (`benches/quality.py`)",
        "",
        f"`ParentChildChunker({PARENT_SIZE}, {CHILD_SIZE})`, parents of the tree's structure; "
        f"trees sampled to about {budget // 1_000_000} MB each, the same files in every "
        "column. Counts of children (level 0), share of the tree's children in brackets.",
        "",
    ]
    for label, run in runs.items():
        lines.append(f"- {label}: {run['name']}")
    first = runs[labels[0]]["trees"]
    for tree, figures in first.items():
        lines += [
            "",
            f"### {tree} ({figures['files']:,} files, {figures['chars']:,} chars)",
            "",
            "| children | " + " | ".join(labels) + " |",
            "|---|" + "---:|" * len(labels),
        ]
        for row in ROWS:
            cells = []
            for label in labels:
                counts = runs[label]["trees"][tree]
                value = counts[row]
                cells.append(
                    f"{value:,}" if row == "children" else share(value, counts["children"])
                )
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="PYTHONPATH of the spanchunk to compare with")
    parser.add_argument("--before-name", default="the spanchunk of --before", help="its name")
    parser.add_argument("--name", default="this build", help="the name of this spanchunk")
    parser.add_argument("--budget", type=float, default=8.0, help="MB per tree (0: all)")
    parser.add_argument("--largest", type=int, default=500_000, help="largest file, bytes")
    parser.add_argument("--out", type=Path, default=REPOSITORY / "benches" / "results")
    parser.add_argument("--json-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    budget = int(options.budget * 1_000_000)
    if options.json_only:
        json.dump(measure(budget, options.largest), sys.stdout)
        return 0
    runs: dict[str, dict[str, Any]] = {}
    if options.before:
        environment = {**os.environ, "PYTHONPATH": options.before}
        arguments = [f"--budget={options.budget}", f"--largest={options.largest}", "--json-only"]
        child = subprocess.run(
            [sys.executable, __file__, *arguments],
            env=environment,
            check=True,
            capture_output=True,
            text=True,
        )
        runs["before"] = json.loads(child.stdout) | {"name": options.before_name}
    label = "after" if options.before else "this build"
    runs[label] = measure(budget, options.largest) | {"name": options.name}
    options.out.mkdir(parents=True, exist_ok=True)
    markdown = report(runs, budget)
    (options.out / "quality.md").write_text(markdown, encoding="utf-8")
    (options.out / "quality.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
