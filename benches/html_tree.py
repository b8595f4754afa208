"""HTML pages on the command line, over a whole documentation tree: speed and the contract.

On the Rust toolchain's documentation (``$(rustc --print sysroot)/share/doc/rust/html``: every
page, about 48,000 files and 780 MB, on every machine with rustc; or ``--tree DIR``), this

- times ``spanchunk chunk TREE -g '*.html' --format html`` against ``--format text`` on the
  same files (JSON Lines to a discarded stdout, default settings: parents of 2000 chars,
  children of 400, 2 workers), best of ``--repeat``: the bar is HTML at least half the plain
  text's MB/s of the same bytes;
- runs the HTML job once more into a JSON Lines file and checks every record of every page
  against the contract: its text is the page's readable text (``HtmlChunker().read``) at its
  char span and at its byte span, no chunk is larger than its level's size or blank, every
  char of the readable text that is not white space lies in a chunk of each level, children
  lie inside their parents, and the span in the page's source lies inside the page's bytes;
  and counts the files the job failed on (a panic of the core is one).

Writes ``benches/results/html-tree.md``. Usage (from the repository root; spanchunk built in
release mode)::

    python benches/html_tree.py [--tree DIR] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
RESULTS = REPOSITORY / "benches" / "results" / "html-tree.md"


def rust_docs() -> Path:
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return Path(sysroot) / "share" / "doc" / "rust" / "html"


def run_job(tree: Path, fmt: str, output: str) -> tuple[float, str]:
    """One ``spanchunk chunk`` process; its wall time and its summary (stderr)."""
    command = [sys.executable, "-m", "spanchunk", "chunk", str(tree), "-g", "*.html"]
    command += ["--format", fmt, "-o", output, "--workers", "2"]
    started = time.perf_counter()
    done = subprocess.run(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr}")
    return seconds, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=None, help="default: the Rust docs")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tree: Path = args.tree or rust_docs()
    pages = sorted(tree.rglob("*.html"))
    total = sum(page.stat().st_size for page in pages)
    megabytes = total / 1e6
    print(f"{len(pages)} pages, {megabytes:.1f} MB in {tree}", flush=True)
    timings: dict[str, float] = {}
    for fmt in ("text", "html"):
        runs = [run_job(tree, fmt, "-")[0] for _ in range(args.repeat)]
        timings[fmt] = min(runs)
        print(f"--format {fmt}: {timings[fmt]:.2f} s, {megabytes / timings[fmt]:.0f} MB/s")
    ratio = timings["text"] / timings["html"]
    # The bound, in this process on one thread: the tokenizer alone (nothing done per
    # event), then the whole read of a page, over every page.
    from spanchunk import _core  # noqa: PLC0415

    sources = [page.read_text(encoding="utf-8", errors="replace") for page in pages]
    bound: dict[str, float] = {}
    for name, function in (("tokenizer alone", _core.html_events), ("read", _core.read_html)):
        started = time.perf_counter()
        for source in sources:
            function(source)
        bound[name] = megabytes / (time.perf_counter() - started)
        print(f"{name}: {bound[name]:.0f} MB/s on one thread")
    del sources

    from spanchunk import HtmlChunker  # noqa: PLC0415

    read = HtmlChunker().read
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "html.jsonl")
        _seconds, summary = run_job(tree, "html", output)
        grouped: dict[str, list[dict[str, object]]] = defaultdict(list)
        with open(output, encoding="utf-8") as lines:
            for line in lines:
                record = json.loads(line)
                grouped[record["source"]].append(record)
    # The check is the tests' (``tests/_records.py``), which run it over the same tree.
    sys.path.insert(0, str(REPOSITORY / "tests"))
    from _records import check_page  # noqa: PLC0415

    problems: list[str] = []
    started = time.perf_counter()
    for source, records in grouped.items():
        problems += check_page(Path(source), records, read, {1: 2000, 0: 400})
    for page in pages:
        unchunked = str(page) not in grouped and os.path.realpath(page) not in grouped
        if unchunked and read(page.read_text(encoding="utf-8", errors="replace")).text.strip():
            problems.append(f"{page}: a page with text and no chunk")
    checked = time.perf_counter() - started
    chunks = sum(len(records) for records in grouped.values())
    failed = [line for line in summary.splitlines() if "fail" in line or "panick" in line]
    status = "PASS" if ratio >= 0.5 else "FAIL"
    lines = [
        "# HTML pages on the command line, a whole tree (`benches/html_tree.py`)",
        "",
        f"{len(pages)} pages, {megabytes:.1f} MB of HTML in `{tree}`; `spanchunk chunk TREE -g "
        "'*.html'`, JSON Lines to a discarded stdout, 2 workers, default settings (parents "
        f"2000 chars, children 400), best of {args.repeat}; {os.cpu_count()} cores.",
        "",
        "| run | seconds | MB/s of HTML |",
        "|---|---:|---:|",
        *(
            f"| `--format {fmt}` | {seconds:.2f} | {megabytes / seconds:.0f} |"
            for fmt, seconds in timings.items()
        ),
        "",
        f"HTML at {ratio:.2f}x the plain text's speed on the same bytes (bar: at least 0.5x): "
        f"{status}.",
        "",
        "The bound, on one thread in one process over the same pages: the tokenizer alone "
        f"(html5gum, nothing done per event) {bound['tokenizer alone']:.0f} MB/s, reading a "
        f"page (tokenizer, readable text, outline, source map) {bound['read']:.0f} MB/s. With "
        f"{os.cpu_count()} workers the tokenizer alone would reach at most "
        f"{bound['tokenizer alone'] * (os.cpu_count() or 1) / (megabytes / timings['text']):.2f}x"
        " the plain text's speed.",
        "",
        f"The contract over every record of the HTML run: {chunks} chunks of {len(grouped)} "
        f"pages checked in {checked:.0f} s, {len(problems)} violations; files the job failed "
        f"on: {len(failed)}.",
        "",
        "The job's summary:",
        "",
        "```text",
        *summary.strip().splitlines(),
        "```",
        "",
    ]
    if problems:
        lines += ["Violations (first 20):", "", *(f"- {problem}" for problem in problems[:20]), ""]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
