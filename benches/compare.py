"""spanchunk against its peers on the parent-child job of docs/performance.md, in one process.

The job, on every folder of the corpus: parents of 2000 chars, children of 400 chars, no
overlap, output = parents AND children, each with its exact start offset in the document.

- spanchunk is measured twice: ``ParentChildChunker(2000, 400).chunk_tree(text)`` (Python
  ``Chunk`` objects, parents then children) and ``.spans(text)`` (a numpy array, integers only).
- The peers do the same job two-level: their splitter at 2000 on the document, then at 400 on
  each parent, the children's offsets made document-relative (parent start + child start):
  LangChain ``RecursiveCharacterTextSplitter`` (``create_documents``, ``add_start_index``),
  semantic-text-splitter ``TextSplitter.chunk_indices``, chonkie ``RecursiveChunker``
  (character tokenizer) and semchunk (``chunkerify(len, size)``, ``offsets=True``).
- Haystack ``HierarchicalDocumentSplitter`` and LlamaIndex ``HierarchicalNodeParser`` are
  references: they do their own hierarchical job in their own units (2000/400 *words* for
  Haystack, 2000/400 *tokens* of cl100k_base, the tokenizer llama-index-core ships, for
  LlamaIndex), so their figures are not the same job and do not count for the bars.

Every system is warmed up with one pass over the whole folder, and that pass is checked (chunk
counts, offsets that slice back to the chunk text, largest chunk). Then ``--repeat`` samples
are timed, the systems taking turns so that load on a shared machine hits them alike. A
sample is the mean of as many passes over the folder as last ``--min-sample`` seconds, each
pass timed alone (a fast system passes over a small folder in milliseconds, too short to time
once on a busy machine); a system too slow for ``--repeat`` samples in ``--budget`` seconds
gets fewer (at least one; the table gives samples x passes). Figures are medians in MB/s:
UTF-8 bytes of the folder divided by the seconds of one pass. A peer that is not installed or
fails is reported as such, never dropped.

Three more sections follow, each from its own script (runnable alone): ``markdown``
(``compare_markdown.py``: Markdown parents against semantic-text-splitter's ``MarkdownSplitter``),
``tokens`` (``compare_tokens.py``: parents of 1024 and children of 256 tokens against
semantic-text-splitter with the same tokenizer, and against one plain encoding) and ``scale``
(``scale.py``: the 100 MB document, linearity, pathological inputs, 2 workers against 1).

Usage (from the repository root, with ``pip install ".[bench]"``)::

    python benches/compare.py [--corpus DIR] [--repeat 5] [--out benches/results]
        [--min-sample 0.25] [--budget 20] [--section chars|markdown|tokens|scale ...]

It writes ``compare.md`` (tables), ``compare.png`` (plot) and ``compare.json`` (raw figures)
under ``--out``, then ``compare-markdown.md`` / ``.json``, ``compare-tokens.md`` and
``scale.md`` / ``.json``. The corpus is ``--corpus``, else ``$SPANCHUNK_CORPUS``, else
``../shared/corpus`` next to the repository; its folders ``gutenberg`` (``*.txt``),
``markdown-en`` and ``markdown-zh`` (``*.md``) are read as UTF-8 (a byte order mark is kept).
"""

# ruff: noqa: PLC0415 - each peer is imported where it is built, so a missing one is reported

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benches/ is on sys.path when this file runs as a script: the corpus is found as
# throughput.py finds it.
from machine_info import cpu_model, git_commit, version_of
from throughput import corpus_root, load_folder

# Peers that phone home or look for models: keep them quiet and offline.
os.environ.setdefault("HAYSTACK_TELEMETRY_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPOSITORY / "benches" / "results"

PARENT_SIZE = 2000
CHILD_SIZE = 400
FOLDER_SUFFIXES = {"gutenberg": (".txt",), "markdown-en": (".md",), "markdown-zh": (".md",)}
END_TO_END_BAR = 5.0
SPANS_BAR = 25.0
MISSING = "\N{EN DASH}"  # an empty table cell

PARENT = 1
CHILD = 0

# A record is (level, start_char, text): level 1 for parents, 0 for children, start_char
# relative to the document. Every peer's job returns one list of records per document.
Record = tuple[int, int, str]
Job = Callable[[Sequence[str]], Any]


@dataclass
class Contender:
    """A built system: its timed job over a folder, and the untimed helpers around it."""

    job: Job  # texts -> the system's output for all of them (the timed part)
    records: Callable[[Sequence[str], Any], list[list[Record]]]  # output -> records, untimed
    reset: Callable[[], None] = lambda: None  # runs after every pass, untimed


@dataclass
class System:
    """One contender: how to build its job, and how to read its output back as records."""

    name: str
    package: str | None  # distribution name, for the version; None for spanchunk itself
    unit: str
    kind: str  # "spanchunk", "peer" (same job, counts for the bars) or "reference"
    build: Callable[[], Contender]


@dataclass
class Result:
    """What one system did on one folder."""

    status: str = "ok"
    seconds: list[float] = field(default_factory=list)  # one figure per sample: s per pass
    passes: int = 0  # passes per sample
    warmup_seconds: float | None = None
    parents: int = 0
    children: int = 0
    largest_parent: int = 0
    largest_child: int = 0
    offsets_exact: bool | None = None
    offsets_wrong: int = 0
    error: str | None = None
    insane: str | None = None  # why the output fails the sanity check, if it does

    @property
    def median(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None


# ---------------------------------------------------------------------------------------------
# The systems
# ---------------------------------------------------------------------------------------------


def _records_from_tuples(_texts: Sequence[str], output: Any) -> list[list[Record]]:
    return output


def build_spanchunk_tree() -> Contender:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE)

    def job(texts: Sequence[str]) -> list[list[Any]]:
        # The parent registry grows with every call; reset() empties it between passes.
        return [chunker.chunk_tree(text) for text in texts]

    def records(texts: Sequence[str], output: list[list[Any]]) -> list[list[Record]]:
        per_document = []
        for text, chunks in zip(texts, output, strict=True):
            encoded = text.encode("utf-8")
            rows = []
            for chunk in chunks:
                exact_bytes = (
                    encoded[chunk.start_byte : chunk.end_byte] == chunk.text.encode("utf-8")
                    and text[chunk.start_char : chunk.end_char] == chunk.text
                )
                # A byte span that disagrees is reported as a wrong start offset.
                start = chunk.start_char if exact_bytes else -1
                rows.append((PARENT if chunk.level == 1 else CHILD, start, chunk.text))
            per_document.append(rows)
        return per_document

    return Contender(job, records, chunker.clear)


def build_spanchunk_tree_read() -> Contender:
    """``chunk_tree`` then every chunk's ``text`` read once: a chunk's text is sliced from the
    document on first read, so this is what a job that reads every text pays (not a bar)."""
    contender = build_spanchunk_tree()
    tree_job = contender.job

    def job(texts: Sequence[str]) -> list[list[Any]]:
        output = tree_job(texts)
        for chunks in output:
            for chunk in chunks:
                chunk.text  # noqa: B018 - the read is the point
        return output

    return Contender(job, contender.records, contender.reset)


def build_spanchunk_spans() -> Contender:
    from spanchunk import ParentChildChunker

    chunker = ParentChildChunker(PARENT_SIZE, CHILD_SIZE)

    def job(texts: Sequence[str]) -> list[Any]:
        return [chunker.spans(text) for text in texts]

    def records(texts: Sequence[str], output: list[Any]) -> list[list[Record]]:
        per_document = []
        for text, spans in zip(texts, output, strict=True):
            encoded = text.encode("utf-8")
            rows = []
            for level, start_byte, end_byte, start_char, end_char in zip(
                spans["level"].tolist(),
                spans["start_byte"].tolist(),
                spans["end_byte"].tolist(),
                spans["start_char"].tolist(),
                spans["end_char"].tolist(),
                strict=True,
            ):
                piece = text[start_char:end_char]
                exact_bytes = encoded[start_byte:end_byte] == piece.encode("utf-8")
                rows.append(
                    (PARENT if level == 1 else CHILD, start_char if exact_bytes else -1, piece)
                )
            per_document.append(rows)
        return per_document

    return Contender(job, records)


def build_langchain(splitter_class: Any = None) -> Contender:
    """LangChain two-level: ``RecursiveCharacterTextSplitter`` unless another class is given
    (``MarkdownTextSplitter`` in ``compare_markdown.py``)."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter_class = splitter_class or RecursiveCharacterTextSplitter
    parent_splitter = splitter_class(chunk_size=PARENT_SIZE, chunk_overlap=0, add_start_index=True)
    child_splitter = splitter_class(chunk_size=CHILD_SIZE, chunk_overlap=0, add_start_index=True)

    def job(texts: Sequence[str]) -> list[list[Record]]:
        per_document = []
        for text in texts:
            rows: list[Record] = []
            for parent in parent_splitter.create_documents([text]):
                parent_start = parent.metadata["start_index"]
                rows.append((PARENT, parent_start, parent.page_content))
                for child in child_splitter.create_documents([parent.page_content]):
                    rows.append(
                        (CHILD, parent_start + child.metadata["start_index"], child.page_content)
                    )
            per_document.append(rows)
        return per_document

    return Contender(job, _records_from_tuples)


def build_semantic_text_splitter(splitter_class: Any = None) -> Contender:
    """semantic-text-splitter two-level: ``TextSplitter`` unless another class is given
    (``MarkdownSplitter`` in ``compare_markdown.py``)."""
    from semantic_text_splitter import TextSplitter

    splitter_class = splitter_class or TextSplitter
    parent_splitter = splitter_class(PARENT_SIZE)
    child_splitter = splitter_class(CHILD_SIZE)

    def job(texts: Sequence[str]) -> list[list[Record]]:
        per_document = []
        for text in texts:
            rows: list[Record] = []
            for parent_start, parent_text in parent_splitter.chunk_indices(text):
                rows.append((PARENT, parent_start, parent_text))
                for child_start, child_text in child_splitter.chunk_indices(parent_text):
                    rows.append((CHILD, parent_start + child_start, child_text))
            per_document.append(rows)
        return per_document

    return Contender(job, _records_from_tuples)


def build_chonkie() -> Contender:
    from chonkie import RecursiveChunker

    parent_chunker = RecursiveChunker(tokenizer="character", chunk_size=PARENT_SIZE)
    child_chunker = RecursiveChunker(tokenizer="character", chunk_size=CHILD_SIZE)

    def job(texts: Sequence[str]) -> list[list[Record]]:
        per_document = []
        for text in texts:
            rows: list[Record] = []
            for parent in parent_chunker.chunk(text):
                parent_start = parent.start_index
                rows.append((PARENT, parent_start, parent.text))
                for child in child_chunker.chunk(parent.text):
                    rows.append((CHILD, parent_start + child.start_index, child.text))
            per_document.append(rows)
        return per_document

    return Contender(job, _records_from_tuples)


def build_semchunk() -> Contender:
    import semchunk

    # memoize=False: caching len() buys nothing, and a cache would carry over between the
    # timed runs of the same texts, which a real ingestion of new documents never sees.
    parent_chunker = semchunk.chunkerify(len, PARENT_SIZE, memoize=False)
    child_chunker = semchunk.chunkerify(len, CHILD_SIZE, memoize=False)

    def job(texts: Sequence[str]) -> list[list[Record]]:
        per_document = []
        for text in texts:
            rows: list[Record] = []
            parents, parent_offsets = parent_chunker(text, offsets=True)
            for parent_text, (parent_start, _parent_end) in zip(
                parents, parent_offsets, strict=True
            ):
                rows.append((PARENT, parent_start, parent_text))
                children, child_offsets = child_chunker(parent_text, offsets=True)
                for child_text, (child_start, _child_end) in zip(
                    children, child_offsets, strict=True
                ):
                    rows.append((CHILD, parent_start + child_start, child_text))
            per_document.append(rows)
        return per_document

    return Contender(job, _records_from_tuples)


def build_haystack() -> Contender:
    from haystack import Document
    from haystack.components.preprocessors import HierarchicalDocumentSplitter

    splitter = HierarchicalDocumentSplitter(
        block_sizes={PARENT_SIZE, CHILD_SIZE}, split_overlap=0, split_by="word"
    )

    def job(texts: Sequence[str]) -> list[list[Record]]:
        documents = [
            Document(id=f"doc-{number}", content=text) for number, text in enumerate(texts)
        ]
        output = splitter.run(documents=documents)["documents"]
        # Blocks of 2000 words are the parents, of 400 the children. split_idx_start is
        # relative to the block split from, which is the document itself where Haystack skips
        # a level (a text that fits in one block of a size gets no block of that size). The
        # output lists every parent before its children.
        starts = {document.id: (number, 0) for number, document in enumerate(documents)}
        per_document: list[list[Record]] = [[] for _ in texts]
        for block in output:
            size = block.meta["__block_size"]
            if not size:  # the document itself
                continue
            number, base = starts[block.meta["__parent_id"]]
            start = base + block.meta["split_idx_start"]
            starts[block.id] = (number, start)
            per_document[number].append(
                (PARENT if size == PARENT_SIZE else CHILD, start, block.content)
            )
        return per_document

    return Contender(job, _records_from_tuples)


def build_llamaindex() -> Contender:
    from llama_index.core import Document
    from llama_index.core.node_parser import HierarchicalNodeParser
    from llama_index.core.schema import NodeRelationship

    # The default tokenizer is tiktoken's cl100k_base, whose file llama-index-core ships in
    # its package (nothing is downloaded); chunk_overlap=0 as in the job.
    parser = HierarchicalNodeParser.from_defaults(
        chunk_sizes=[PARENT_SIZE, CHILD_SIZE], chunk_overlap=0
    )

    def job(texts: Sequence[str]) -> list[list[Record]]:
        documents = [Document(text=text, id_=f"doc-{number}") for number, text in enumerate(texts)]
        nodes = parser.get_nodes_from_documents(documents)
        # Roots carry offsets in the document, leaves in their parent node.
        by_document = {document.id_: number for number, document in enumerate(documents)}
        parent_of: dict[str, tuple[int, int]] = {}
        per_document: list[list[Record]] = [[] for _ in texts]
        for node in nodes:
            if NodeRelationship.PARENT not in node.relationships:
                number = by_document[node.ref_doc_id]
                start = node.start_char_idx
                parent_of[node.node_id] = (number, start)
                per_document[number].append(
                    (PARENT, -1 if start is None else start, node.get_content())
                )
        for node in nodes:
            parent = node.relationships.get(NodeRelationship.PARENT)
            if parent is not None:
                number, parent_start = parent_of[parent.node_id]
                known = parent_start is not None and node.start_char_idx is not None
                start = parent_start + node.start_char_idx if known else -1
                per_document[number].append((CHILD, start, node.get_content()))
        return per_document

    return Contender(job, _records_from_tuples)


SYSTEMS = [
    System("spanchunk chunk_tree", None, "chars", "spanchunk", build_spanchunk_tree),
    System("spanchunk spans", None, "chars", "spanchunk", build_spanchunk_spans),
    System("spanchunk chunk_tree + .text", None, "chars", "spanchunk", build_spanchunk_tree_read),
    System(
        "semantic-text-splitter",
        "semantic-text-splitter",
        "chars",
        "peer",
        build_semantic_text_splitter,
    ),
    System("LangChain", "langchain-text-splitters", "chars", "peer", build_langchain),
    System("chonkie", "chonkie", "chars", "peer", build_chonkie),
    System("semchunk", "semchunk", "chars", "peer", build_semchunk),
    System("Haystack (reference)", "haystack-ai", "words", "reference", build_haystack),
    System(
        "LlamaIndex (reference)",
        "llama-index-core",
        "tokens (cl100k_base)",
        "reference",
        build_llamaindex,
    ),
]
TREE = SYSTEMS[0].name
SPANS = SYSTEMS[1].name
SEMANTIC = next(system.name for system in SYSTEMS if system.package == "semantic-text-splitter")


# ---------------------------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------------------------


def describe(error: BaseException) -> str:
    message = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {message}"[:160]


def check(texts: Sequence[str], per_document: list[list[Record]], result: Result) -> None:
    """Counts, largest chunks, and whether every start offset slices back to its text."""
    wrong = 0
    for text, rows in zip(texts, per_document, strict=True):
        for level, start, piece in rows:
            if level == PARENT:
                result.parents += 1
                result.largest_parent = max(result.largest_parent, len(piece))
            else:
                result.children += 1
                result.largest_child = max(result.largest_child, len(piece))
            if start is None or start < 0 or text[start : start + len(piece)] != piece:
                wrong += 1
    result.offsets_wrong = wrong
    result.offsets_exact = wrong == 0
    if result.parents == 0 or result.children == 0:
        # Still timed and shown, but flagged, and never the "fastest peer" of a bar.
        result.insane = f"{result.parents} parents, {result.children} children"


def timed(job: Job, texts: Sequence[str]) -> tuple[float, Any]:
    """Seconds of one pass of job over texts, and its output."""
    started = time.perf_counter()
    output = job(texts)
    return time.perf_counter() - started, output


def sample(contender: Contender, texts: Sequence[str], passes: int) -> float:
    """Mean seconds of passes consecutive passes, each timed alone (output freed, untimed)."""
    gc.collect()
    total = 0.0
    for _ in range(passes):
        seconds, output = timed(contender.job, texts)
        total += seconds
        del output
        contender.reset()
    return total / passes


def measure_folder(
    texts: Sequence[str], settings: argparse.Namespace, log: Callable[[str], None]
) -> dict[str, Result]:
    """Warm up and check every system, then time them in turns; a Result per system.

    A sample is the mean of enough passes to last settings.min_sample seconds (a pass of a
    fast system over a small folder takes milliseconds, too little to time alone on a busy
    machine); the figure is the median of settings.repeat samples, fewer for a system whose
    samples would not fit in settings.budget seconds.
    """
    results: dict[str, Result] = {}
    contenders: dict[str, Contender] = {}
    samples: dict[str, int] = {}
    for system in SYSTEMS:
        result = results[system.name] = Result()
        try:
            contender = system.build()
        except ImportError as error:
            result.status, result.error = "not installed", describe(error)
            log(f"  {system.name}: not installed ({result.error})")
            continue
        except Exception as error:  # a broken peer is reported, not fatal
            result.status, result.error = "failed", describe(error)
            log(f"  {system.name}: failed to set up ({result.error})")
            continue
        try:
            gc.collect()
            result.warmup_seconds, output = timed(contender.job, texts)
            check(texts, contender.records(texts, output), result)
            del output
            contender.reset()
        except Exception as error:
            result.status, result.error = "failed", describe(error)
            log(f"  {system.name}: failed ({result.error})")
            traceback.print_exc(limit=3, file=sys.stderr)
            continue
        contenders[system.name] = contender
        warmup = max(result.warmup_seconds, 1e-6)
        result.passes = max(1, min(1000, math.ceil(settings.min_sample / warmup)))
        samples[system.name] = max(
            1, min(settings.repeat, int(settings.budget / (warmup * result.passes)))
        )
        log(
            f"  {system.name}: warm-up {result.warmup_seconds:.3f} s, "
            f"{result.parents} parents, {result.children} children, "
            f"offsets exact: {'yes' if result.offsets_exact else 'no'}"
            f"{f' (suspect output: {result.insane})' if result.insane else ''}; "
            f"{samples[system.name]} samples of {result.passes} passes"
        )
    # Take turns, so that a burst of load on a shared machine does not land on one system.
    for round_number in range(settings.repeat):
        for name, contender in contenders.items():
            result = results[name]
            if round_number >= samples[name] or result.status != "ok":
                continue
            try:
                result.seconds.append(sample(contender, texts, result.passes))
            except Exception as error:
                result.status, result.error = "failed", describe(error)
                log(f"  {name}: failed in a timed pass ({result.error})")
    return results


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    packages = {"spanchunk": version_of("spanchunk")}
    for system in SYSTEMS:
        if system.package:
            packages[system.package] = version_of(system.package)
    for extra in ("numpy", "matplotlib"):
        packages[extra] = version_of(extra)
    return {
        "cpu": cpu_model(),
        "cores": usable,
        "os": f"{platform.system()} {platform.release()} {platform.machine()}",
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": packages,
        "repository_commit": git_commit(),
    }


def mb_s(megabytes: float, result: Result) -> float | None:
    median = result.median
    return megabytes / median if median else None


def figure(value: float | None, digits: int = 1) -> str:
    return MISSING if value is None else f"{value:,.{digits}f}"


def ratio(numerator: float | None, denominator: float | None) -> str:
    if not numerator or not denominator:
        return MISSING
    return f"{numerator / denominator:,.1f}x"


def status_cell(result: Result) -> str:
    if result.status == "ok":
        return f"suspect output: {result.insane}" if result.insane else "ok"
    return f"{result.status}: {result.error}".replace("|", "/")


def offsets_cell(result: Result) -> str:
    if result.offsets_exact is None:
        return MISSING
    if result.offsets_exact:
        return "yes"
    return f"no ({result.offsets_wrong:,} wrong)"


def folder_table(folder: dict[str, Any]) -> list[str]:
    results: dict[str, Result] = folder["results"]
    megabytes = folder["megabytes"]
    tree = mb_s(megabytes, results[TREE])
    spans = mb_s(megabytes, results[SPANS])
    lines = [
        f"### {folder['name']}: {folder['files']} files, {megabytes:.2f} MB",
        "",
        "| system | unit | runs | MB/s | parents | children | largest parent / child (chars) "
        "| offsets exact | chunk_tree vs it | spans vs it | status |",
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for system in SYSTEMS:
        result = results[system.name]
        speed = mb_s(megabytes, result)
        measured = result.status == "ok" or bool(result.seconds)
        versus = [
            MISSING if system.kind == "spanchunk" else ratio(ours, speed) for ours in (tree, spans)
        ]
        counts = (
            f"| {result.parents:,} | {result.children:,} "
            f"| {result.largest_parent:,} / {result.largest_child:,} "
            if measured
            else f"| {MISSING} | {MISSING} | {MISSING} "
        )
        runs = f"{len(result.seconds)} x {result.passes}" if result.seconds else MISSING
        lines.append(
            f"| {system.name} | {system.unit} | {runs} "
            f"| {figure(speed)} {counts}| {offsets_cell(result)} "
            f"| {versus[0]} | {versus[1]} | {status_cell(result)} |"
        )
    return lines


def bars(folders: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for folder in folders:
        results: dict[str, Result] = folder["results"]
        megabytes = folder["megabytes"]
        tree = mb_s(megabytes, results[TREE])
        spans = mb_s(megabytes, results[SPANS])
        peers = [
            (system.name, mb_s(megabytes, results[system.name]))
            for system in SYSTEMS
            if system.kind == "peer"
            and not results[system.name].insane
            and mb_s(megabytes, results[system.name])
        ]
        fastest = max(peers, key=lambda pair: pair[1]) if peers else (None, None)
        semantic = mb_s(megabytes, results[SEMANTIC])
        for label, ours, peer, bar, our_name in (
            ("end to end (chunk_tree) vs the fastest peer", tree, fastest, END_TO_END_BAR, TREE),
            ("spans vs semantic-text-splitter", spans, (SEMANTIC, semantic), SPANS_BAR, SPANS),
        ):
            value = ours / peer[1] if ours and peer[1] else None
            rows.append(
                {
                    "folder": folder["name"],
                    "figure": label,
                    "spanchunk": our_name,
                    "spanchunk_mb_s": ours,
                    "peer": peer[0],
                    "peer_mb_s": peer[1],
                    "ratio": value,
                    "bar": bar,
                    "result": (
                        "n/a (not measured)"
                        if value is None
                        else "PASS"
                        if value >= bar
                        else "FAIL"
                    ),
                }
            )
    return rows


def write_markdown(
    path: Path,
    info: dict[str, Any],
    settings: dict[str, Any],
    folders: list[dict[str, Any]],
    summary: list[dict[str, Any]],
) -> str:
    packages = ", ".join(
        f"{name} {version}" if version else f"{name} (not installed)"
        for name, version in info["packages"].items()
    )
    lines = [
        "# spanchunk against its peers",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['os']}, {info['python']}; "
        f"{packages}; repository HEAD {info['repository_commit'] or 'unknown'}; "
        f"{settings['date']}.",
        "",
        f"Job: parents of {PARENT_SIZE} and children of {CHILD_SIZE} chars, no overlap, parents "
        "and children with exact document offsets, one thread, one process. Peers run their "
        "splitter on the document, then on each parent, and add the parent's start to the "
        "children's. Haystack and LlamaIndex are references doing their own hierarchical job "
        "in their own units (words; cl100k_base tokens) and do not count for the bars. "
        f"After a warm-up pass over the folder, median of {settings['repeat']} samples, each the "
        f"mean of enough passes over the whole folder to last {settings['min_sample']:g} s, "
        "the systems taking turns (a system too slow for that in "
        f"{settings['budget']:g} s gets fewer samples: see *runs*); MB/s = UTF-8 MB of the "
        "folder per second of one pass. "
        f'Reproduce: `pip install ".[bench]" && python benches/compare.py`.',
        "",
        "## Bars (docs/performance.md, under Against the peers)",
        "",
        "| corpus | figure | spanchunk MB/s | peer | peer MB/s | ratio | bar | result |",
        "|---|---|---:|---|---:|---:|---:|---|",
    ]
    for row in summary:
        lines.append(
            f"| {row['folder']} | {row['figure']} | {figure(row['spanchunk_mb_s'])} "
            f"| {row['peer'] or MISSING} | {figure(row['peer_mb_s'])} "
            f"| {MISSING if row['ratio'] is None else format(row['ratio'], ',.1f') + 'x'} "
            f"| >= {row['bar']:g}x | {row['result']} |"
        )
    lines += ["", "## Per corpus folder", ""]
    for folder in folders:
        lines += [*folder_table(folder), ""]
    lines += [
        "*runs*: samples x passes per sample behind the median. *offsets exact*: every "
        "chunk's reported start (document-relative; parent start + child start for the peers) "
        "slices the document back to the chunk's text; for spanchunk the byte spans are "
        "checked too. *largest*: in chars, whatever the system's unit. *X vs it*: "
        "spanchunk's MB/s over the system's.",
        "",
        "How each system is called (sizes 2000 for parents, 400 for children):",
        "",
        "- spanchunk: `ParentChildChunker(2000, 400)`, `.chunk_tree(text)` (parents then "
        "children, `Chunk` objects; the parent registry is emptied between passes, untimed) and "
        "`.spans(text)` (one numpy structured array per document). A chunk's `text` is "
        "sliced from the document when first read; *chunk_tree + .text* reads every chunk's "
        "text once after `chunk_tree`, what a job that reads them all pays (not a bar).",
        "- semantic-text-splitter: `TextSplitter(size).chunk_indices(text)` (char offsets).",
        "- LangChain: `RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0, "
        "add_start_index=True).create_documents([text])`, offsets from `metadata['start_index']`.",
        '- chonkie: `RecursiveChunker(tokenizer="character", chunk_size=size).chunk(text)`, '
        "offsets from `start_index`.",
        "- semchunk: `chunkerify(len, size, memoize=False)(text, offsets=True)`; memoizing `len` "
        "buys nothing, and its cache would carry over between passes over the same texts.",
        "- Haystack: `HierarchicalDocumentSplitter(block_sizes={2000, 400}, split_overlap=0, "
        'split_by="word")` on all documents of the folder in one `run`. Its unit is words '
        "(split on spaces), so its blocks are far longer than 2000/400 chars, and where a text "
        "fits in one block of a size it makes no block of that size: a document under 2000 "
        "words has its 400-word blocks straight under the document, and one under 400 words "
        "has no blocks. Chinese, written without spaces, has few such words, hence no "
        "2000-word parents on markdown-zh.",
        "- LlamaIndex: `HierarchicalNodeParser.from_defaults(chunk_sizes=[2000, 400], "
        "chunk_overlap=0)` on all documents of the folder in one call; its unit is tokens of "
        "tiktoken's cl100k_base, whose file llama-index-core ships (nothing is downloaded). "
        "Leaf offsets are relative to their parent node, and are made document-relative.",
        "",
        "![MB/s per system and corpus folder](compare.png)",
        "",
    ]
    text = "\n".join(lines)
    path.write_text(text, encoding="utf-8")
    return text


def write_plot(path: Path, folders: list[dict[str, Any]], info: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    names = [system.name for system in SYSTEMS]
    colours = ["#1b6ca8", "#e08a1e", "#4d9b4d", "#8e5ea2"]
    height = 0.8 / max(len(folders), 1)
    figure_, axes = plt.subplots(figsize=(11, 1.6 + 0.75 * len(names)))
    all_values = []
    labelled: set[str] = set()
    for position, folder in enumerate(folders):
        results: dict[str, Result] = folder["results"]
        colour = colours[position % len(colours)]
        for row, name in enumerate(names):
            value = mb_s(folder["megabytes"], results[name])
            y = row + (position - (len(folders) - 1) / 2) * height
            if value is None:
                axes.text(
                    0.01,
                    y,
                    f"{folder['name']}: {results[name].status}",
                    va="center",
                    fontsize=8,
                    color="#a00",
                    transform=axes.get_yaxis_transform(),
                )
                continue
            all_values.append(value)
            label = None if folder["name"] in labelled else folder["name"]
            labelled.add(folder["name"])
            reference = SYSTEMS[row].kind == "reference"
            axes.barh(
                y,
                value,
                height=height * 0.9,
                color=colour,
                label=label,
                alpha=0.55 if reference else 1.0,
                hatch="//" if reference else None,
                edgecolor="white" if reference else None,
                linewidth=0,
            )
            axes.text(value * 1.05, y, f"{value:,.1f}", va="center", fontsize=7.5)
    axes.set_xscale("log")
    if all_values:
        axes.set_xlim(min(all_values) / 2, max(all_values) * 4)
    axes.set_yticks(range(len(names)))
    axes.set_yticklabels(
        [
            f"{system.name}\n[{system.unit}]" if system.kind == "reference" else system.name
            for system in SYSTEMS
        ]
    )
    for tick, system in zip(axes.get_yticklabels(), SYSTEMS, strict=True):
        if system.kind == "spanchunk":
            tick.set_fontweight("bold")
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _position: f"{value:g}"))
    axes.invert_yaxis()
    axes.set_xlabel("MB/s (UTF-8 MB of the folder per second, median; log scale; higher is better)")
    axes.set_title(
        f"Parent {PARENT_SIZE} / child {CHILD_SIZE} chars, parents + children with offsets "
        "(references: their own job, in their own units)\n"
        f"{info['cpu']}, {info['cores']} cores, {info['python']}, one thread",
        fontsize=10,
    )
    axes.legend(title="corpus", loc="lower right")
    axes.grid(axis="x", which="both", alpha=0.25)
    figure_.tight_layout()
    figure_.savefig(path, dpi=130)
    plt.close(figure_)


def write_json(
    path: Path,
    info: dict[str, Any],
    settings: dict[str, Any],
    folders: list[dict[str, Any]],
    summary: list[dict[str, Any]],
) -> None:
    document = {
        "machine": info,
        "settings": settings,
        "folders": [
            {
                "name": folder["name"],
                "files": folder["files"],
                "megabytes": folder["megabytes"],
                "systems": {
                    system.name: {
                        "unit": system.unit,
                        "kind": system.kind,
                        "status": folder["results"][system.name].status,
                        "error": folder["results"][system.name].error,
                        "warmup_seconds": folder["results"][system.name].warmup_seconds,
                        "seconds": folder["results"][system.name].seconds,
                        "passes_per_sample": folder["results"][system.name].passes,
                        "median_seconds": folder["results"][system.name].median,
                        "mb_s": mb_s(folder["megabytes"], folder["results"][system.name]),
                        "parents": folder["results"][system.name].parents,
                        "children": folder["results"][system.name].children,
                        "largest_parent_chars": folder["results"][system.name].largest_parent,
                        "largest_child_chars": folder["results"][system.name].largest_child,
                        "offsets_exact": folder["results"][system.name].offsets_exact,
                        "offsets_wrong": folder["results"][system.name].offsets_wrong,
                    }
                    for system in SYSTEMS
                },
            }
            for folder in folders
        ],
        "bars": summary,
    }
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    """Measure every folder of the corpus and write the Markdown, PNG and JSON reports."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", metavar="DIR", help="corpus folder (one table per sub-folder)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="timed samples per system and folder (median)"
    )
    parser.add_argument(
        "--min-sample",
        type=float,
        default=0.25,
        metavar="SECONDS",
        help="a sample repeats the pass until it lasts this long, and gives the mean",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        metavar="SECONDS",
        help="timed seconds per system and folder, roughly: a slow system gets fewer samples",
    )
    parser.add_argument("--out", metavar="DIR", default=str(DEFAULT_OUT), help="report folder")
    parser.add_argument(
        "--section",
        choices=SECTIONS,
        action="append",
        help="run only this section (repeatable); default: all of " + ", ".join(SECTIONS),
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.min_sample < 0 or args.budget <= 0:
        parser.error("--min-sample must be >= 0 and --budget > 0")

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    root = corpus_root(args.corpus)
    if not root.is_dir():
        log(f"compare: no corpus at {root}; pass --corpus DIR or set SPANCHUNK_CORPUS")
        return 1
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sections = args.section or list(SECTIONS)
    status = _chars_section(root, out, args, log) if "chars" in sections else 0
    if "markdown" in sections:
        import compare_markdown

        options = ["--corpus", str(root), "--repeat", str(args.repeat), "--out", str(out)]
        options += ["--min-sample", str(args.min_sample), "--budget", str(args.budget)]
        report, _ = _captured(lambda: compare_markdown.main(options))
        (out / "compare-markdown.md").write_text(report, encoding="utf-8")
        print(report)
        log(f"compare: wrote {out}/compare-markdown.md, .json")
    if "tokens" in sections:
        import compare_tokens

        report, _ = _captured(lambda: compare_tokens.main(["--corpus", str(root)]))
        (out / "compare-tokens.md").write_text(report, encoding="utf-8")
        print(report)
        log(f"compare: wrote {out}/compare-tokens.md")
    if "scale" in sections:
        import scale

        report, _ = _captured(lambda: scale.main(["--corpus", str(root), "--out", str(out)]))
        print(report)
        log(f"compare: wrote {out}/scale.md, .json")
    return status


SECTIONS = ("chars", "markdown", "tokens", "scale")


def _captured(job: Callable[[], int]) -> tuple[str, int]:
    """What job prints to stdout, and what it returns."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = job()
    return buffer.getvalue(), code


def _chars_section(
    root: Path, out: Path, args: argparse.Namespace, log: Callable[[str], None]
) -> int:
    """The parent-child job in chars, against every peer: compare.md, .png and .json."""
    started = time.perf_counter()
    folders = []
    for name, suffixes in FOLDER_SUFFIXES.items():
        texts = load_folder(root / name, suffixes) if (root / name).is_dir() else []
        if not texts:
            log(f"compare: no {'/'.join(suffixes)} files in {root / name}; skipped")
            continue
        megabytes = sum(len(text.encode("utf-8")) for text in texts) / 1e6
        log(f"{name}: {len(texts)} files, {megabytes:.2f} MB")
        results = measure_folder(texts, args, log)
        folders.append(
            {"name": name, "files": len(texts), "megabytes": megabytes, "results": results}
        )
    if not folders:
        log(f"compare: nothing to measure under {root}")
        return 1

    info = machine()
    settings = {
        "parent_size": PARENT_SIZE,
        "child_size": CHILD_SIZE,
        "overlap": 0,
        "repeat": args.repeat,
        "budget": args.budget,
        "min_sample": args.min_sample,
        "corpus": str(root),
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    summary = bars(folders)
    markdown = write_markdown(out / "compare.md", info, settings, folders, summary)
    write_json(out / "compare.json", info, settings, folders, summary)
    try:
        write_plot(out / "compare.png", folders, info)
    except ImportError as error:
        log(f"compare: no plot ({describe(error)}); pip install matplotlib")
    print(markdown)
    log(f"compare: wrote {out}/compare.md, .png, .json in {settings['total_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
