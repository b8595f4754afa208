"""Each framework's own hierarchical splitter against spanchunk's integration, same run.

Both sides produce the framework's own objects, on every folder of the shared corpus:

- LangChain: the parent/child split of ``ParentDocumentRetriever`` (a parent splitter on the
  documents, then a child splitter on each parent), 2000/400 chars, no overlap,
  ``add_start_index=True``: ``RecursiveCharacterTextSplitter`` twice, against spanchunk's
  ``tree_documents`` (one ``ParentChildChunker(2000, 400)`` tree per document, the path of
  ``index_documents``) and against ``SpanchunkTextSplitter`` used as the two splitters. A
  third row is a bound, not a splitter: ``tree_documents``' own Documents made again from
  fields built beforehand (nothing cut, no string made) by the core's maker, the least any
  splitter that returns them pays.
- LlamaIndex: ``HierarchicalNodeParser.from_defaults(chunk_sizes=[2048, 512, 128],
  chunk_overlap=0)`` (sizes in cl100k_base tokens) against
  ``SpanchunkNodeParser(chunk_sizes=[2048, 512, 128], unit="token",
  encoding="cl100k_base")``: ``TextNode`` objects with relationships.
- Haystack: ``HierarchicalDocumentSplitter(block_sizes={330, 66}, split_by="word")`` (about
  2000/400 chars of English; Haystack has no char unit) against
  ``SpanchunkDocumentSplitter(block_sizes=[2000, 400])``, and against the same settings as
  Haystack's (``SpanchunkDocumentSplitter(block_sizes=[330, 66], unit="word")``: on Chinese,
  written without spaces, 330 words are far more than 2000 chars): ``Document`` objects with
  the tree fields, the root included on both sides.

Each system gets one warm-up pass per folder (checked: offsets slice back to the text where
the system gives document offsets), then ``--repeat`` timed passes, the two sides taking
turns, each after a ``gc.collect()`` (so that no pass pays for a collection the other side's
garbage made due); a pass slower than ``--budget`` seconds stops that system's repeats.
Figures are medians in MB/s (UTF-8 MB of the folder per second of one pass).

Ray Data: the corpus repeated to ``--ray-mb`` MB (ids made unique) in 16 Arrow blocks (the
same for both CPU counts, one batch per block), ``ParentChildChunker(2000, 400)``, consumed
by counting rows, on ``ray.init(num_cpus=1)`` against ``ray.init(num_cpus=2)``, each in a
fresh process; two paths: actors (``map_batches(ChunkBatches, concurrency=N)``, one per
CPU) and tasks (``map_batches(chunk_batch, fn_kwargs=...)`` on Ray's pooled workers), with
Ray Data's per-operator resource reservation off (on 2 CPUs it ran one batch at a time).
Each plan is executed ``--ray-executions`` times per process (5): the first execution
includes starting the actors (and Ray's worker processes and helper actors), each later one
is a new execution of the same plan (new actors too); the bar is judged on the best
execution time, without Ray's own start, as the command line's bars are on the best of 5
runs, and the median of the later executions is reported beside it (on the 2-core machine
one execution on 2 CPUs ranged 0.80-0.92 s in one process). The CPU seconds of every Ray
process (read from /proc) show where the best execution's time went.

Usage (from the repository root, with the frameworks installed: ``pip install ".[test]"``)::

    python benches/integrations.py [--corpus DIR] [--repeat 3] [--budget 60] [--ray-mb 100]
        [--ray-executions 5] [--skip-ray] [--out benches/results]

``--skip-ray`` keeps the Ray section of the previous ``integrations.json`` (Ray's figures are
then from an earlier run, as the report says), when it has this job's layout (both paths).

Writes ``integrations.md`` and ``integrations.json`` under ``--out``.
"""

# ruff: noqa: PLC0415 - each framework is imported where it is measured

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = {"gutenberg": "*.txt", "markdown-en": "*.md", "markdown-zh": "*.md"}


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    configured = os.environ.get("SPANCHUNK_CORPUS")
    return Path(configured) if configured else ROOT.parent / "shared" / "corpus"


#: The name of a row that is a bound (no bar): see ``langchain_cases``.
FLOOR = "(bound: "


def read_folder(root: Path, folder: str) -> list[tuple[str, str]]:
    paths = sorted((root / folder).glob(FOLDERS[folder]))
    return [(path.name, path.read_text(encoding="utf-8")) for path in paths]


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    # Each pass starts with the other side's garbage collected: a full collection that the
    # previous pass made due (the frameworks' heap is large) is not charged to this one.
    gc.collect()
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def compare(
    name: str,
    megabytes: float,
    *,
    theirs: Callable[[], list[Any]],
    ours: Callable[[], list[Any]],
    check_ours: Callable[[list[Any]], None],
    repeat: int,
    budget: float,
) -> dict[str, Any]:
    """Warm up and check both, then alternate timed passes; medians in MB/s."""
    _, their_objects = timed(theirs)
    _, our_objects = timed(ours)
    check_ours(our_objects)
    their_times: list[float] = []
    our_times: list[float] = []
    for _ in range(repeat):
        if not their_times or their_times[-1] < budget:
            seconds, _ = timed(theirs)
            their_times.append(seconds)
        seconds, _ = timed(ours)
        our_times.append(seconds)
    theirs_mbs = megabytes / statistics.median(their_times)
    ours_mbs = megabytes / statistics.median(our_times)
    return {
        "framework": name,
        "theirs_mb_s": theirs_mbs,
        "ours_mb_s": ours_mbs,
        "ratio": ours_mbs / theirs_mbs,
        "theirs_objects": len(their_objects),
        "ours_objects": len(our_objects),
        "theirs_runs": len(their_times),
        "ours_runs": len(our_times),
    }


def langchain_cases(files: list[tuple[str, str]]) -> list[tuple[str, Any, Any, Any]]:
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from spanchunk import ParentChildChunker
    from spanchunk.integrations.langchain import SpanchunkTextSplitter, tree_documents
    from spanchunk.integrations.langchain.fields import _SHAPE

    documents = [Document(text, metadata={"source": name}) for name, text in files]
    texts = {name: text for name, text in files}

    def theirs() -> list[Any]:
        parents = RecursiveCharacterTextSplitter(
            chunk_size=2000, chunk_overlap=0, add_start_index=True
        ).split_documents(documents)
        children = RecursiveCharacterTextSplitter(
            chunk_size=400, chunk_overlap=0, add_start_index=True
        ).split_documents(parents)
        return parents + children

    chunker = ParentChildChunker(2000, 400)

    def ours_tree() -> list[Any]:
        out = tree_documents(documents, chunker)
        chunker.clear()
        return out

    def ours_splitters() -> list[Any]:
        parents = SpanchunkTextSplitter(2000, level=1).split_documents(documents)
        return parents + SpanchunkTextSplitter(400).split_documents(parents)

    def check(docs: list[Any]) -> None:
        for doc in docs:
            text = texts[doc.metadata["source"]]
            start, end = doc.metadata["start_index"], doc.metadata["end_index"]
            assert text[start:end] == doc.page_content

    # A bound, not a splitter: tree_documents' own Documents made again from fields built
    # beforehand (texts, ids, metadata: nothing cut, no string made), by the fastest maker
    # there is (the core's, as tree_documents makes them), each metadata a shallow copy.
    # Any splitter that returns these Documents pays at least this.
    fields = [(doc.id, doc.page_content, doc.metadata) for doc in ours_tree()]
    chunker.clear()

    def documents_alone() -> list[Any]:
        build = _SHAPE.build
        return [build(id_, text, dict(metadata)) for id_, text, metadata in fields]

    return [
        ("LangChain (tree_documents)", theirs, ours_tree, check),
        ("LangChain (SpanchunkTextSplitter x2)", theirs, ours_splitters, check),
        (FLOOR + "LangChain's Documents alone, fields prebuilt)", theirs, documents_alone, check),
    ]


def llamaindex_cases(files: list[tuple[str, str]]) -> list[tuple[str, Any, Any, Any]]:
    from llama_index.core import Document
    from llama_index.core.node_parser import HierarchicalNodeParser
    from spanchunk.integrations.llamaindex import SpanchunkNodeParser

    documents = [Document(text=text, id_=name) for name, text in files]
    texts = {name: text for name, text in files}
    theirs_parser = HierarchicalNodeParser.from_defaults(
        chunk_sizes=[2048, 512, 128], chunk_overlap=0
    )
    ours_parser = SpanchunkNodeParser(
        chunk_sizes=[2048, 512, 128], unit="token", encoding="cl100k_base"
    )

    def check(nodes: list[Any]) -> None:
        for node in nodes:
            text = texts[node.ref_doc_id]
            assert text[node.start_char_idx : node.end_char_idx] == node.text

    return [
        (
            "LlamaIndex (TextNodes, 3 levels, tokens)",
            lambda: theirs_parser.get_nodes_from_documents(documents),
            lambda: ours_parser.get_nodes_from_documents(documents),
            check,
        )
    ]


def haystack_cases(files: list[tuple[str, str]]) -> list[tuple[str, Any, Any, Any]]:
    from haystack import Document
    from haystack.components.preprocessors import HierarchicalDocumentSplitter
    from spanchunk.integrations.haystack import SpanchunkDocumentSplitter

    documents = [Document(content=text, meta={"name": name}) for name, text in files]
    texts = {name: text for name, text in files}
    theirs_splitter = HierarchicalDocumentSplitter(block_sizes={330, 66}, split_by="word")
    ours_splitter = SpanchunkDocumentSplitter(block_sizes=[2000, 400])
    # The same settings as Haystack's: its words (`split(" ")`), 330 and 66 of them. On
    # Chinese, written without spaces, 330 words are far more than 2000 chars, so the row
    # above makes about 3 times Haystack's documents there.
    ours_words = SpanchunkDocumentSplitter(block_sizes=[330, 66], unit="word")

    def check(docs: list[Any]) -> None:
        for doc in docs:
            if doc.meta["__level"] == 0:
                continue
            text = texts[doc.meta["name"]]
            start, end = doc.meta["split_idx_start"], doc.meta["split_idx_end"]
            assert text[start:end] == doc.content

    return [
        (
            "Haystack (Documents, root + 2 levels, 2000/400 chars)",
            lambda: theirs_splitter.run(documents)["documents"],
            lambda: ours_splitter.run(documents)["documents"],
            check,
        ),
        (
            "Haystack (Documents, root + 2 levels, Haystack's 330/66 words)",
            lambda: theirs_splitter.run(documents)["documents"],
            lambda: ours_words.run(documents)["documents"],
            check,
        ),
    ]


RAY_SCRIPT = r"""
import json, os, sys, time, warnings
warnings.simplefilter("ignore", DeprecationWarning)
import pyarrow as pa
import ray
from spanchunk.integrations.ray import ChunkBatches, chunk_batch

cpus, target_mb, corpus = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
executions, blocks_per_cpu = int(sys.argv[4]), 8
from pathlib import Path
paths = sorted(p for p in Path(corpus).glob("*/*") if p.suffix in {".md", ".txt"})
texts = [p.read_text(encoding="utf-8") for p in paths]
size = sum(len(t.encode()) for t in texts)
copies = max(1, round(target_mb * 1e6 / size))
ids = [f"{n}/{p}" for n in range(copies) for p in paths]
table = pa.table({"id": ids, "text": texts * copies})
megabytes = size * copies / 1e6
# The same blocks for 1 and 2 CPUs: 16 of them, a few MB each (one batch per block).
count = 2 * blocks_per_cpu
step = -(-table.num_rows // count)
blocks = [table.slice(start, step) for start in range(0, table.num_rows, step)]
settings = {"parent_size": 2000, "child_size": 400}


def cpu_seconds():
    # CPU seconds of this process and of every Ray process, from /proc (Linux).
    found = {}
    tick = os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as file:
                command = file.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as file:
                fields = file.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(pid) == os.getpid():
            kind = "driver"
        elif "ray::" in command:
            batches = any(name in command for name in ("IDLE", "MapBatches", "ChunkBatches"))
            kind = "workers" if batches else "ray (other actors)"
        elif "raylet" in command or "gcs_server" in command or "ray/" in command:
            kind = "ray (raylet, gcs, agents)"
        else:
            continue
        found[pid] = (kind, (int(fields[11]) + int(fields[12])) / tick)
    return found


started = time.perf_counter()
ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
ray_start = time.perf_counter() - started
# Ray Data reserves part of the CPUs for each operator's outputs; on 2 CPUs that let one batch
# task run at a time (3.6-4.0 s against 2.1 s for the same execution): off, as for a small
# local cluster that runs a single map.
ray.data.DataContext.get_current().op_resource_reservation_enabled = False
dataset = ray.data.from_arrow(blocks)
paths_run = {
    "actors": lambda: dataset.map_batches(
        ChunkBatches, fn_constructor_kwargs=settings, batch_format="pyarrow",
        batch_size=None, concurrency=cpus,
    ),
    "tasks": lambda: dataset.map_batches(
        chunk_batch, fn_kwargs=settings, batch_format="pyarrow", batch_size=None,
    ),
}
results = {}
for name, plan in paths_run.items():
    rounds, cpus_of = [], []
    for _ in range(executions):
        before = cpu_seconds()
        started = time.perf_counter()
        rows = plan().count()
        rounds.append(time.perf_counter() - started)
        cpu = {}
        for pid, (kind, seconds) in cpu_seconds().items():
            spent = seconds - before.get(pid, (kind, 0.0))[1]
            cpu[kind] = round(cpu.get(kind, 0.0) + spent, 2)
        cpus_of.append(cpu)
    # The CPU seconds of the fastest execution after the first.
    best = min(range(1, executions), key=rounds.__getitem__)
    results[name] = {"rounds": rounds, "rows": rows, "cpu": cpus_of[best]}
ray.shutdown()
print(json.dumps({"cpus": cpus, "megabytes": megabytes, "blocks": len(blocks),
                  "ray_start": ray_start, "paths": results}))
"""


def ray_scaling(corpus: Path, megabytes: float, executions: int) -> dict[str, Any]:
    results = {}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "python"), *sys.path])}
    for cpus in (1, 2):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                RAY_SCRIPT,
                str(cpus),
                str(megabytes),
                str(corpus),
                str(executions),
            ],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=1800,
        )
        results[cpus] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def versions() -> str:
    from importlib.metadata import version

    names = ["langchain-text-splitters", "langchain-core", "llama-index-core", "haystack-ai"]
    names += ["ray", "pyarrow"]
    found = []
    for name in names:
        try:
            found.append(f"{name} {version(name)}")
        except Exception:
            found.append(f"{name} absent")
    return ", ".join(found)


def write_report(out: Path, rows: list[dict[str, Any]], ray: dict[str, Any] | None) -> None:
    lines = [
        "# spanchunk's integrations against each framework's own hierarchical splitter",
        "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
        f"(shared with other jobs), {platform.system()} {platform.release()}, CPython "
        f"{platform.python_version()}; {versions()}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        "Both sides build the framework's own objects (see `benches/integrations.py` for each "
        "job). Medians of the timed passes, the two sides taking turns in one process, each pass "
        "after a `gc.collect()`; MB/s = "
        "UTF-8 MB of the folder per second of one pass. Bar: >= 10x. The bound row is the "
        "most any splitter that returns LangChain's Documents could reach: tree_documents' "
        "own Documents made again from fields built beforehand (nothing cut, no string "
        "made), by the core's maker.",
        "",
        "| corpus | framework | theirs MB/s | spanchunk MB/s | ratio | objects (theirs / ours) "
        "| runs | bar | result |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        bound = row["framework"].startswith(FLOOR)
        bar = "(a bound)" if bound else ">= 10x"
        passed = "-" if bound else "PASS" if row["ratio"] >= 10 else "FAIL"
        lines.append(
            f"| {row['corpus']} | {row['framework']} | {row['theirs_mb_s']:.2f} | "
            f"{row['ours_mb_s']:.2f} | {row['ratio']:.1f}x | {row['theirs_objects']:,} / "
            f"{row['ours_objects']:,} | {row['theirs_runs']} / {row['ours_runs']} | {bar} | "
            f"{passed} |"
        )
    if ray is not None:
        one, two = ray[1], ray[2]
        first_path = next(iter(one["paths"].values()))
        lines += [
            "",
            "## Ray Data, 2 local CPUs against 1",
            "",
            f"The corpus repeated to {one['megabytes']:.1f} MB ({first_path['rows']:,} chunk "
            f"rows) in {one['blocks']} Arrow blocks, `ParentChildChunker(2000, 400)`, one "
            "batch per block, consumed by `count()`: as actors, `map_batches(ChunkBatches, "
            'batch_format="pyarrow", concurrency=N)`, and as tasks, `map_batches(chunk_batch, '
            'fn_kwargs=..., batch_format="pyarrow")`. Seconds of one dataset execution (the '
            "actors are started inside each), executed "
            f"{len(first_path['rounds'])} times in one process per CPU count: the 1st "
            "(which starts Ray's worker processes), then the best and the median of the "
            "others; Ray's own start is shown apart. CPU seconds of the best execution per "
            "process kind (from /proc): the driver, the processes that ran the batches, and "
            "Ray's own.",
            "",
            "| path | CPUs | ray.init s | 1st execution s | best of the rest s | median of the "
            "rest s | MB/s (best) | CPU s: driver / batches / Ray's own |",
            "|---|---:|---:|---:|---:|---:|---:|---|",
        ]
        for name in one["paths"]:
            for result in (one, two):
                path = result["paths"][name]
                first, *rest = path["rounds"]
                best, median = min(rest), statistics.median(rest)
                cpu = path["cpu"]
                own = sum(value for kind, value in cpu.items() if kind.startswith("ray"))
                lines.append(
                    f"| {name} | {result['cpus']} | {result['ray_start']:.1f} | {first:.2f} | "
                    f"{best:.2f} | {median:.2f} | {result['megabytes'] / best:.1f} | "
                    f"{cpu.get('driver', 0):.1f} / {cpu.get('workers', 0):.1f} / {own:.1f} |"
                )
        lines.append("")
        for name in one["paths"]:
            rounds = one["paths"][name]["rounds"], two["paths"][name]["rounds"]
            speedup = min(rounds[0]) / min(rounds[1])
            typical = statistics.median(rounds[0][1:]) / statistics.median(rounds[1][1:])
            verdict = "PASS" if speedup >= 1.6 else "FAIL"
            lines.append(
                f"Speed-up as {name}, best execution: {speedup:.2f}x (bar >= 1.6x): {verdict}; "
                f"median against median: {typical:.2f}x."
            )
    lines.append("")
    (out / "integrations.md").write_text("\n".join(lines), encoding="utf-8")
    (out / "integrations.json").write_text(
        json.dumps({"frameworks": rows, "ray": ray}, indent=2), encoding="utf-8"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--ray-mb", type=float, default=100.0)
    parser.add_argument("--ray-executions", type=int, default=5)
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "benches" / "results"))
    args = parser.parse_args()
    corpus = corpus_dir(args.corpus)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for folder in FOLDERS:
        files = read_folder(corpus, folder)
        megabytes = sum(len(text.encode("utf-8")) for _, text in files) / 1e6
        cases = langchain_cases(files) + llamaindex_cases(files) + haystack_cases(files)
        for name, theirs, ours, check in cases:
            row = compare(
                name,
                megabytes,
                theirs=theirs,
                ours=ours,
                check_ours=check,
                repeat=args.repeat,
                budget=args.budget,
            )
            row["corpus"] = folder
            rows.append(row)
            print(
                f"{folder:12} {name:40} {row['theirs_mb_s']:8.2f} {row['ours_mb_s']:8.2f} "
                f"{row['ratio']:6.1f}x",
                flush=True,
            )
    previous = out / "integrations.json"
    if args.skip_ray and previous.is_file():  # keep the last Ray figures, measured apart
        ray = json.loads(previous.read_text(encoding="utf-8")).get("ray")
        ray = None if ray is None else {int(cpus): result for cpus, result in ray.items()}
        if ray is not None and any(
            "paths" not in result or len(next(iter(result["paths"].values()))["rounds"]) < 3
            for result in ray.values()
        ):
            ray = None  # figures of an older layout of the Ray job: not comparable
    else:
        ray = None if args.skip_ray else ray_scaling(corpus, args.ray_mb, args.ray_executions)
    if ray is not None:
        print(json.dumps(ray), flush=True)
    write_report(out, rows, ray)


if __name__ == "__main__":
    main()
