"""HTML pages as structure, measured on the Rust toolchain's documentation of this machine.

The corpus: ``$(rustc --print sysroot)/share/doc/rust/html``. Two kinds of page, each sampled
deterministically (every Nth page sorted by path, N chosen so that each kind brings about half
of ``--sample`` megabytes of HTML source):

- mdBook pages: the pages of a top-level folder that holds mdBook's ``print.html`` (book,
  cargo, reference, rust-by-example, ...) and whose source contains ``<div id="mdbook-`` (the
  theme's containers; redirect stubs and the old rustdoc-made stubs lack them); ``print.html``
  itself (every chapter of its book again) is left out.
- rustdoc pages: the API pages under ``std/``, ``core/`` and ``alloc/`` that hold a
  ``<main`` element (redirect stubs do not).

The job, on every page: parents of at most 2000 chars cut at the page's headings, children of
at most 400 chars inside each parent, no overlap; output = parents AND children.

- spanchunk: ``ParentChildChunker(2000, 400, parent_chunker="html").chunk_tree(page)``.
- LangChain: ``HTMLHeaderTextSplitter`` on h1-h6, then
  ``RecursiveCharacterTextSplitter(chunk_size=2000, chunk_overlap=0).split_documents`` for
  the parents and ``chunk_size=400`` on the parents for the children (its documentation's
  combination of the two).
- LlamaIndex: ``HTMLNodeParser`` (default tags), then ``HierarchicalNodeParser`` with
  ``chunk_sizes=[P, C]``, ``chunk_overlap=0`` over its nodes (an ingestion pipeline's
  chaining: a parent never spans two of ``HTMLNodeParser``'s nodes). It counts tokens
  (its default tokenizer, tiktoken ``cl100k_base``): P and C are 2000 and 400 divided by the
  chars per token of the sample's readable text, by that tokenizer.

All chunkers run on the same pages in one process: spanchunk best of ``--repeat``, the peers
``--peer-repeat`` times (once by default: they are slow). Reported for each: seconds, MB/s of
HTML source, the ratio of the peer's seconds to spanchunk's, parents and children; the share
of parents that start at a heading (one definition for everyone: the parent's first words are
the words of one of the page's h1-h6 elements, found by html5lib with the reference's dropped
elements left out; for spanchunk also: its text starts with the last heading of
``metadata["headings"]``); and the words against the reference extractor
(``reference_words`` of ``tests/test_html.py``, html5lib, the page's ``<main>``): per page,
the reference's words missing from the union of the chunker's leaves (a multiset
difference), and the leaves' words the reference lacks, summed over the pages. The leaves'
words are split at white space, ``"|"`` left out as the reference does; spanchunk's leaves
are joined by their spans in the readable text (a word cut between two children counts
once). Pages where a peer raised are listed and left out of its word counts.

Usage (from the repository root, a release build installed, the ``bench`` extra too)::

    python benches/compare_html.py [--sample 30] [--repeat 3] [--peer-repeat 1]
        [--out benches/results]

It prints the figures and writes ``compare-html.md`` and ``compare-html.json`` under
``--out``.
"""

# ruff: noqa: PLC0415 - each peer is imported where it is built, so a missing one is reported

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from machine_info import REPOSITORY, cpu_model, git_commit, version_of

PARENT_SIZE = 2000
CHILD_SIZE = 400
SPEED_BAR = 20.0
MDBOOK_MARKER = '<div id="mdbook-'
RUSTDOC_FOLDERS = ("std", "core", "alloc")
SVG = "{http://www.w3.org/2000/svg}svg"
HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
EXAMPLES = 12


@dataclass
class Page:
    path: str  # relative to the documentation's root
    kind: str  # "mdbook" or "rustdoc"
    source: str


@dataclass
class Leaves:
    """What a chunker made of one page: its parents' texts and the words of its leaves."""

    parents: list[str]
    children: int
    words: list[str]
    # spanchunk only: the last heading of each parent's path ("" where it has none)
    parent_headings: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    seconds: float
    pages: list[Leaves | None]  # None: the chunker raised on the page
    errors: dict[str, str]


# ---------------------------------------------------------------------------------- corpus


def rust_docs() -> Path:
    sysroot = subprocess.run(
        ["rustc", "--print", "sysroot"], capture_output=True, text=True, check=True
    ).stdout.strip()
    root = Path(sysroot) / "share" / "doc" / "rust" / "html"
    if not root.is_dir():
        raise SystemExit(f"the Rust documentation is not at {root}: install rustup's rust-docs")
    return root


def every_nth(paths: Sequence[Path], megabytes: float) -> tuple[list[Path], int]:
    """Every Nth path, N such that the sample holds about ``megabytes`` of files."""
    total = sum(path.stat().st_size for path in paths)
    every = max(1, math.ceil(total / (megabytes * 1e6))) if megabytes > 0 else 1
    return list(paths[::every]), every


def load_sample(root: Path, megabytes: float) -> tuple[list[Page], dict[str, Any]]:
    books = sorted(folder.name for folder in root.iterdir() if (folder / "print.html").is_file())
    mdbook = sorted(
        path
        for book in books
        for path in (root / book).rglob("*.html")
        if path.name != "print.html"
    )
    rustdoc = sorted(path for folder in RUSTDOC_FOLDERS for path in (root / folder).rglob("*.html"))
    pages: list[Page] = []
    corpus: dict[str, Any] = {"root": str(root), "books": books, "kinds": {}}
    for kind, candidates, marker in (
        ("mdbook", mdbook, MDBOOK_MARKER),
        ("rustdoc", rustdoc, "<main"),
    ):
        chosen, every = every_nth(candidates, megabytes / 2)
        kept = 0
        for path in chosen:
            source = path.read_text(encoding="utf-8")
            if marker in source:
                pages.append(Page(str(path.relative_to(root)), kind, source))
                kept += 1
        corpus["kinds"][kind] = {
            "candidates": len(candidates),
            "every": every,
            "sampled": len(chosen),
            "pages": kept,
            "megabytes": sum(len(p.source.encode()) for p in pages if p.kind == kind) / 1e6,
        }
    return pages, corpus


# ----------------------------------------------------------------------------- chunkers


def words_of(text: str) -> list[str]:
    return [word for word in text.split() if word != "|"]


def run_spanchunk(pages: Sequence[Page]) -> Outcome:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE, parent_chunker="html")
    started = time.perf_counter()
    trees = [chunker.chunk_tree(page.source) for page in pages]
    seconds = time.perf_counter() - started
    chunker.clear()
    out: list[Leaves | None] = []
    for tree in trees:
        parents = [chunk for chunk in tree if chunk.level == 1]
        children = sorted(
            (chunk for chunk in tree if chunk.level == 0), key=lambda chunk: chunk.start_char
        )
        # The union of the children's spans in the readable text, a gap read as a space.
        pieces: list[str] = []
        end = -1
        for chunk in children:
            if end >= 0 and chunk.start_char > end:
                pieces.append(" ")
            skip = max(0, end - chunk.start_char)
            pieces.append(chunk.text[skip:])
            end = max(end, chunk.end_char)
        out.append(
            Leaves(
                [chunk.text for chunk in parents],
                len(children),
                words_of("".join(pieces)),
                [
                    chunk.metadata["headings"][-1] if chunk.metadata["headings"] else ""
                    for chunk in parents
                ],
            )
        )
    return Outcome(seconds, out, {})


def run_langchain(pages: Sequence[Page]) -> Outcome:
    from langchain_text_splitters import HTMLHeaderTextSplitter, RecursiveCharacterTextSplitter

    headers = HTMLHeaderTextSplitter([(tag, tag) for tag in HEADINGS])
    parent_splitter = RecursiveCharacterTextSplitter(chunk_size=PARENT_SIZE, chunk_overlap=0)
    child_splitter = RecursiveCharacterTextSplitter(chunk_size=CHILD_SIZE, chunk_overlap=0)

    def one(source: str) -> Leaves:
        parents = parent_splitter.split_documents(headers.split_text(source))
        children = child_splitter.split_documents(parents)
        words = [word for child in children for word in words_of(child.page_content)]
        return Leaves([parent.page_content for parent in parents], len(children), words)

    return timed_per_page(one, pages)


def llama_sizes(pages: Sequence[Page]) -> tuple[int, int, float]:
    """Token sizes for LlamaIndex: 2000 and 400 chars by the chars per token of the sample's
    readable text (spanchunk's reading of it), by LlamaIndex's default tokenizer."""
    from llama_index.core.utils import get_tokenizer
    from spanchunk import HtmlChunker

    tokenize = get_tokenizer()
    reader = HtmlChunker()
    chars = tokens = 0
    for page in pages:
        text = reader.read(page.source).text
        chars += len(text)
        tokens += len(tokenize(text))
    per_token = chars / max(tokens, 1)
    return round(PARENT_SIZE / per_token), round(CHILD_SIZE / per_token), per_token


def run_llamaindex(pages: Sequence[Page], parent_tokens: int, child_tokens: int) -> Outcome:
    from llama_index.core.node_parser import HierarchicalNodeParser, HTMLNodeParser
    from llama_index.core.node_parser.relational.hierarchical import (
        get_leaf_nodes,
        get_root_nodes,
    )
    from llama_index.core.schema import Document

    html_parser = HTMLNodeParser()
    hierarchy = HierarchicalNodeParser.from_defaults(
        chunk_sizes=[parent_tokens, child_tokens], chunk_overlap=0
    )

    def one(source: str) -> Leaves:
        # Chained as an ingestion pipeline chains its transformations.
        nodes = hierarchy(html_parser([Document(text=source)]))
        leaves = get_leaf_nodes(nodes)
        words = [word for leaf in leaves for word in words_of(leaf.get_content())]
        return Leaves([root.get_content() for root in get_root_nodes(nodes)], len(leaves), words)

    return timed_per_page(one, pages)


def timed_per_page(one: Callable[[str], Leaves], pages: Sequence[Page]) -> Outcome:
    out: list[Leaves | None] = []
    errors: dict[str, str] = {}
    started = time.perf_counter()
    for page in pages:
        try:
            out.append(one(page.source))
        except Exception as error:
            out.append(None)
            errors[page.path] = f"{type(error).__name__}: {str(error)[:200]}"
    return Outcome(time.perf_counter() - started, out, errors)


def best_of(repeat: int, run: Callable[[], Outcome]) -> Outcome:
    best = run()
    for _ in range(repeat - 1):
        again = run()
        if again.seconds < best.seconds:
            best = again
    return best


# ------------------------------------------------------------------------------ reference


def load_reference() -> Callable[[str], list[str]]:
    # The tests import their helpers (``_contract``) from their own folder.
    sys.path.insert(0, str(REPOSITORY / "tests"))
    from test_html import reference_words

    extract: Callable[[str], list[str]] = reference_words
    return extract


def page_facts(source: str) -> tuple[list[list[str]], Counter[str]]:
    """The words of each h1-h6 element of the page (html5lib; the elements the reference
    drops left out, headings with no words skipped), and the words of its SVG text.

    html5lib names SVG elements with their namespace (``{http://www.w3.org/2000/svg}svg``),
    so the reference's ``tag in DROPPED`` keeps the text of an ``<svg>`` (the railroad
    diagrams of the Reference's grammar, hidden on the page) that spanchunk drops: the words
    a chunker misses that are SVG text of the page are counted apart."""
    import html5lib
    from test_html import DROPPED

    root = html5lib.parse(source, namespaceHTMLElements=False)

    def text_of(node: Any) -> str:
        tag = node.tag if isinstance(node.tag, str) else None
        if tag is None or tag.rpartition("}")[2] in DROPPED:
            return ""
        return (node.text or "") + "".join(text_of(child) + (child.tail or "") for child in node)

    def all_text(node: Any) -> str:
        return (node.text or "") + "".join(all_text(child) + (child.tail or "") for child in node)

    headings = []
    svg: Counter[str] = Counter()
    for node in root.iter():
        if node.tag in HEADINGS:
            words = words_of(text_of(node))
            if words:
                headings.append(words)
        elif node.tag == SVG:
            svg.update(words_of(all_text(node)))
    return headings, svg


@dataclass
class Tally:
    parents: int = 0
    children: int = 0
    at_heading: int = 0
    heading_alone: int = 0
    at_own_heading: int = 0  # spanchunk: starts with the last heading of its path
    without_path: int = 0  # spanchunk: an empty heading path
    lost: int = 0
    lost_svg: int = 0  # of which words of the page's SVG text
    added: int = 0
    pages_losing: int = 0
    pages_adding: int = 0
    lost_words: Counter[str] = field(default_factory=Counter)
    added_words: Counter[str] = field(default_factory=Counter)
    losing_pages: list[dict[str, Any]] = field(default_factory=list)


def tally_page(
    tally: Tally,
    page: Page,
    leaves: Leaves,
    reference: Counter[str],
    facts: tuple[list[list[str]], Counter[str]],
) -> None:
    headings, svg = facts
    tally.parents += len(leaves.parents)
    tally.children += leaves.children
    heading_tuples = {tuple(words) for words in headings}
    for index, text in enumerate(leaves.parents):
        words = words_of(text)
        if any(tuple(words[: len(h)]) == h for h in heading_tuples):
            tally.at_heading += 1
        if tuple(words) in heading_tuples:
            tally.heading_alone += 1
        if leaves.parent_headings:
            own = leaves.parent_headings[index].strip()
            tally.without_path += not own
            tally.at_own_heading += bool(own) and text.lstrip().startswith(own)
    got = Counter(leaves.words)
    lost = reference - got
    added = got - reference
    tally.lost += sum(lost.values())
    in_svg = lost & svg
    tally.lost_svg += sum(in_svg.values())
    lost -= in_svg
    tally.added += sum(added.values())
    tally.pages_losing += bool(lost)
    tally.pages_adding += bool(added)
    tally.lost_words.update(lost)
    tally.added_words.update(added)
    if lost and len(tally.losing_pages) < EXAMPLES:
        tally.losing_pages.append({"page": page.path, "lost": sorted(lost.elements())[:EXAMPLES]})


def share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


# ---------------------------------------------------------------------------------- report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sample", type=float, default=30.0, help="megabytes of HTML source, half per kind"
    )
    parser.add_argument("--repeat", type=int, default=3, help="spanchunk: best of")
    parser.add_argument("--peer-repeat", type=int, default=1, help="the peers: best of")
    parser.add_argument("--out", type=Path, default=REPOSITORY / "benches" / "results")
    args = parser.parse_args(argv)

    root = rust_docs()
    pages, corpus = load_sample(root, args.sample)
    megabytes = sum(len(page.source.encode()) for page in pages) / 1e6
    print(f"{len(pages)} pages, {megabytes:.1f} MB: {json.dumps(corpus['kinds'])}", flush=True)

    parent_tokens, child_tokens, per_token = llama_sizes(pages)
    print(f"LlamaIndex sizes: {parent_tokens} / {child_tokens} tokens "
          f"({per_token:.2f} chars a token)", flush=True)  # fmt: skip
    runs: dict[str, Callable[[], Outcome]] = {
        "spanchunk": lambda: run_spanchunk(pages),
        "LangChain": lambda: run_langchain(pages),
        "LlamaIndex": lambda: run_llamaindex(pages, parent_tokens, child_tokens),
    }
    outcomes: dict[str, Outcome] = {}
    for name, run in runs.items():
        repeat = args.repeat if name == "spanchunk" else args.peer_repeat
        outcomes[name] = best_of(repeat, run)
        print(f"{name}: {outcomes[name].seconds:.2f} s, "
              f"{len(outcomes[name].errors)} pages raised", flush=True)  # fmt: skip

    reference_words = load_reference()
    tallies = {name: Tally() for name in runs}
    read_tally = Tally()  # spanchunk's readable text alone, before any cut
    from spanchunk import HtmlChunker

    reader = HtmlChunker()
    for index, page in enumerate(pages):
        reference = Counter(reference_words(page.source))
        facts = page_facts(page.source)
        for name, outcome in outcomes.items():
            leaves = outcome.pages[index]
            if leaves is not None:
                tally_page(tallies[name], page, leaves, reference, facts)
        text = reader.read(page.source).text
        tally_page(read_tally, page, Leaves([], 0, words_of(text)), reference, facts)

    report: dict[str, Any] = {
        "machine": cpu_model(),
        "cores": os.cpu_count(),
        "commit": git_commit(),
        "versions": {
            name: version_of(name)
            for name in (
                "spanchunk",
                "langchain-text-splitters",
                "llama-index-core",
                "beautifulsoup4",
                "lxml",
                "html5lib",
                "tiktoken",
            )
        },
        "settings": {
            "sample_megabytes": args.sample,
            "repeat": args.repeat,
            "peer_repeat": args.peer_repeat,
            "parent_chars": PARENT_SIZE,
            "child_chars": CHILD_SIZE,
            "llamaindex_parent_tokens": parent_tokens,
            "llamaindex_child_tokens": child_tokens,
            "chars_per_token": per_token,
        },
        "corpus": corpus,
        "pages": len(pages),
        "megabytes": megabytes,
        "bar": SPEED_BAR,
        "chunkers": {},
        "spanchunk_readable_text": summary(read_tally),
        "load_average": os.getloadavg()[0],
    }
    ours = outcomes["spanchunk"].seconds
    for name, outcome in outcomes.items():
        tally = tallies[name]
        report["chunkers"][name] = {
            "seconds": outcome.seconds,
            "mb_per_s": megabytes / outcome.seconds,
            "ratio": None if name == "spanchunk" else outcome.seconds / ours,
            "pages_raised": len(outcome.errors),
            "errors": dict(list(outcome.errors.items())[:EXAMPLES]),
            **summary(tally),
        }
        if name == "spanchunk":
            report["chunkers"][name]["parents_at_own_heading"] = tally.at_own_heading
            report["chunkers"][name]["parents_without_heading_path"] = tally.without_path

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare-html.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out / "compare-html.md").write_text(text)
    print(text)
    spanchunk = report["chunkers"]["spanchunk"]
    passed = spanchunk["words_lost"] == spanchunk["words_lost_svg_text"] and all(
        figures["ratio"] >= SPEED_BAR
        for name, figures in report["chunkers"].items()
        if name != "spanchunk"
    )
    return 0 if passed else 1


def summary(tally: Tally) -> dict[str, Any]:
    return {
        "parents": tally.parents,
        "children": tally.children,
        "parents_at_heading": tally.at_heading,
        "parents_heading_alone": tally.heading_alone,
        "words_lost": tally.lost,
        "words_lost_svg_text": tally.lost_svg,
        "words_added": tally.added,
        "pages_losing_words": tally.pages_losing,
        "pages_adding_words": tally.pages_adding,
        "most_lost": tally.lost_words.most_common(EXAMPLES),
        "most_added": tally.added_words.most_common(EXAMPLES),
        "losing_pages": tally.losing_pages,
    }


def examples(pairs: Iterable[Sequence[Any]]) -> str:
    return ", ".join(f"`{word}` {count}" for word, count in pairs) or "none"


def markdown(report: dict[str, Any]) -> str:
    settings, corpus = report["settings"], report["corpus"]
    kinds = corpus["kinds"]
    chunkers = report["chunkers"]
    lines = [
        "# HTML pages: parent-child chunks of the Rust documentation",
        "",
        f"`benches/compare_html.py --sample {settings['sample_megabytes']:g}` on "
        f"{report['pages']} pages ({report['megabytes']:.1f} MB of HTML) of "
        f"`{corpus['root']}`: {kinds['mdbook']['pages']} mdBook pages "
        f"({kinds['mdbook']['megabytes']:.1f} MB, every {kinds['mdbook']['every']}th of "
        f"{kinds['mdbook']['candidates']} pages of the books {', '.join(corpus['books'])}, "
        f"with `{MDBOOK_MARKER}`, `print.html` left out) and {kinds['rustdoc']['pages']} "
        f"rustdoc pages ({kinds['rustdoc']['megabytes']:.1f} MB, every "
        f"{kinds['rustdoc']['every']}th of {kinds['rustdoc']['candidates']} pages under "
        f"{', '.join(RUSTDOC_FOLDERS)}, with `<main`). {report['machine']}, "
        f"{report['cores']} cores, commit {report['commit']}; versions {report['versions']}; "
        f"load average {report['load_average']:.1f} at the end.",
        "",
        f"Parents {settings['parent_chars']} chars, children {settings['child_chars']}, no "
        'overlap. spanchunk `ParentChildChunker(2000, 400, parent_chunker="html").'
        f"chunk_tree(page)`, best of {settings['repeat']}; LangChain "
        "`HTMLHeaderTextSplitter` (h1-h6) then `RecursiveCharacterTextSplitter` at 2000 "
        "(parents) and at 400 on each parent (children), `chunk_overlap=0`; LlamaIndex "
        "`HTMLNodeParser` (default tags) then `HierarchicalNodeParser(chunk_sizes="
        f"[{settings['llamaindex_parent_tokens']}, {settings['llamaindex_child_tokens']}], "
        "chunk_overlap=0)` over its nodes, tokens of `cl100k_base` "
        f"({settings['chars_per_token']:.2f} chars a token on the sample's readable text); "
        f"the peers best of {settings['peer_repeat']}. All on the same pages, in one process.",
        "",
        "| chunker | seconds | MB/s | peer / spanchunk | parents | children | parents at a "
        "heading | parents a heading alone | words lost | of them SVG text | words added | "
        "pages raised |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, figures in chunkers.items():
        ratio = "" if figures["ratio"] is None else f"{figures['ratio']:.1f}x"
        lines.append(
            f"| {name} | {figures['seconds']:.2f} | {figures['mb_per_s']:.2f} | {ratio} | "
            f"{figures['parents']} | {figures['children']} | "
            f"{100 * share(figures['parents_at_heading'], figures['parents']):.1f}% | "
            f"{100 * share(figures['parents_heading_alone'], figures['parents']):.1f}% | "
            f"{figures['words_lost']} | {figures['words_lost_svg_text']} | "
            f"{figures['words_added']} ({figures['pages_adding_words']} pages) | "
            f"{figures['pages_raised']} |"
        )
    ours = chunkers["spanchunk"]
    ratios = [f["ratio"] for name, f in chunkers.items() if name != "spanchunk"]
    verdict = ours["words_lost"] == ours["words_lost_svg_text"] and all(
        ratio >= report["bar"] for ratio in ratios
    )
    read = report["spanchunk_readable_text"]
    lines += [
        "",
        f"Bar: spanchunk at least {report['bar']:.0f}x each peer and 0 words lost (SVG text "
        "apart, below): "
        f"{'PASS' if verdict else 'FAIL'}.",
        "",
        "A parent is at a heading when its first words are the words of one of the page's "
        "h1-h6 elements (html5lib, the elements the reference drops left out); a heading "
        "alone when those are all its words. spanchunk's parents that start with the last "
        f'heading of their `metadata["headings"]`: {ours["parents_at_own_heading"]} of '
        f"{ours['parents']}; with an empty heading path: "
        f"{ours['parents_without_heading_path']}.",
        "",
        "Words against the reference (`reference_words` of `tests/test_html.py`: html5lib, "
        "the page's `<main>`), per page, as multisets, summed: lost = the reference's words "
        "missing from the union of the chunker's leaves, added = the leaves' words the "
        "reference lacks. The peers read the whole `<body>` (navigation, sidebars) and are "
        "counted as they are. The reference keeps the text of `<svg>` elements (html5lib "
        "names them with their namespace, which its `DROPPED` check misses: the railroad "
        "diagrams of the Reference's grammar, hidden on the page), which spanchunk drops: "
        "lost words that are SVG text of the page are counted apart, and the examples and "
        "page counts below leave them out. spanchunk's readable text alone "
        f"(`HtmlChunker().read`), before any cut: {read['words_lost']} lost "
        f"({read['words_lost_svg_text']} of them SVG text), {read['words_added']} added.",
        "",
    ]
    for name, figures in chunkers.items():
        lines.append(
            f"- {name}: {figures['pages_losing_words']} pages lose words outside SVG text, "
            f"{figures['pages_adding_words']} add words; most lost "
            f"{examples(figures['most_lost'])}; most added {examples(figures['most_added'])}."
        )
        if figures["errors"]:
            raised = "; ".join(f"`{page}`: {error}" for page, error in figures["errors"].items())
            lines.append(f"  Raised on {figures['pages_raised']} pages: {raised}.")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
