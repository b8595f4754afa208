"""The contract over a whole documentation tree of HTML pages: the Rust toolchain's
documentation (``$(rustc --print sysroot)/share/doc/rust/html``, about 48,000 pages and
550 MB, on every machine with rustup's default profile), cut by the command line with
``--format html`` into JSON Lines, every record of every page checked (``_records.py``): its
text at its char and byte spans in the page's readable text, strict sizes, coverage, children
inside parents, source spans inside the page; no file failed and no page with text lacks
chunks. ``benches/html_tree.py`` times the same run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from _records import check_page
from spanchunk import HtmlChunker


def rust_docs() -> Path:
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    root = Path(sysroot) / "share" / "doc" / "rust" / "html"
    assert root.is_dir(), (
        f"the Rust documentation is not at {root}: `rustup component add rust-docs` installs it"
    )
    return root


def test_every_page_of_the_rust_documentation(tmp_path: Path) -> None:
    tree = rust_docs()
    pages = sorted(tree.rglob("*.html"))
    assert len(pages) > 10_000, f"{tree} holds {len(pages)} pages: not the whole documentation"
    output = tmp_path / "pages.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "spanchunk", "chunk", str(tree), "-g", "*.html",
         "--format", "html", "-o", str(output), "--parent-size", "2000", "--child-size", "400"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # No file failed (a panic of the core would be one) and none was skipped.
    assert "fail" not in done.stderr and "panick" not in done.stderr, done.stderr
    grouped: dict[str, list[dict[str, object]]] = defaultdict(list)
    with output.open(encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            grouped[record["source"]].append(record)
    read = HtmlChunker().read
    problems: list[str] = []
    for source, records in grouped.items():
        problems += check_page(Path(source), records, read, {1: 2000, 0: 400})
    for page in pages:
        if str(page) in grouped or os.path.realpath(page) in grouped:
            continue
        if read(page.read_text(encoding="utf-8", errors="replace")).text.strip():
            problems.append(f"{page}: a page with text and no chunk")
    assert problems == [], "\n".join(problems[:20])
    assert len(grouped) > 10_000
