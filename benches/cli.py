"""The command line job, timed as a user runs it: whole processes, startup included.

On a folder of about 100 MB (the shared corpus copied ``--copies`` times, each copy under its
own folder name, in a temporary folder), default settings (parents of 2000 chars, children of
400), this times

- ``spanchunk chunk DIR -o out.jsonl`` and ``-o out.parquet`` on 2 workers, and on 1;
- ``-o out.jsonl --sync`` (the output flushed to the disk before its rename);
- the same with a process pool instead of threads (``--pool process``, a hidden option);
- ``-o out.sqlite`` (the store) on 2 workers and on 1, each run into a new file; then the
  same command again into the store the last run left, on the unchanged folder (the
  incremental re-run: every file listed and its state compared with the store's, none read);
- the same job the way a user would write it without spanchunk: LangChain's
  ``RecursiveCharacterTextSplitter`` two-level (parents of 2000, then children of 400 inside
  each, ``add_start_index``), one ``json.dumps`` per chunk, one process;

then, on a real tree of many small files, a third of them binary (``--tree``: by default the
Python installation's library folder, read where it is, which every machine has), ``-o
out.jsonl`` on 2 workers (MB/s of its text) and ``-o out.sqlite``, a first run and a re-run
on the unchanged tree (whose binaries the store recorded, so they are not read again);

and, in this process on the corpus once, what JSON Lines cost to write: the core's writer
(``_core.write_documents``) against ``Chunk`` objects serialised with ``orjson`` and with
``json.dumps``. Best of ``--repeat`` runs (LangChain once: it takes a minute). Writes
``benches/results/cli.md``.

Usage (from the repository root; the interpreter needs spanchunk built in release mode,
langchain-text-splitters, pyarrow and orjson)::

    python benches/cli.py [--corpus DIR] [--copies 20] [--repeat 3] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPOSITORY.parent / "shared" / "corpus"
RESULTS = REPOSITORY / "benches" / "results" / "cli.md"

# The job without spanchunk, as a script a user would write (run in its own process).
LANGCHAIN_JOB = r"""
import hashlib, json, os, sys
from langchain_text_splitters import RecursiveCharacterTextSplitter

root, output = sys.argv[1], sys.argv[2]
parents = RecursiveCharacterTextSplitter(chunk_size=2000, chunk_overlap=0, add_start_index=True)
children = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=0, add_start_index=True)
paths = sorted(os.path.join(folder, name) for folder, _, names in os.walk(root) for name in names)
with open(output, "w", encoding="utf-8") as out:
    for path in paths:
        with open(path, encoding="utf-8", newline="") as file:
            text = file.read()
        document_id = hashlib.sha1(text.encode()).hexdigest()[:16]
        for p, parent in enumerate(parents.create_documents([text])):
            start = parent.metadata["start_index"]
            parent_id = f"{document_id}-{p}"
            kids = children.create_documents([parent.page_content])
            ids = [f"{parent_id}-{c}" for c in range(len(kids))]
            out.write(json.dumps({"id": parent_id, "document_id": document_id, "source": path,
                                  "level": 1, "index": p, "parent_id": None, "child_ids": ids,
                                  "start_char": start, "end_char": start + len(parent.page_content),
                                  "text": parent.page_content}, ensure_ascii=False) + "\n")
            for c, child in enumerate(kids):
                begin = start + child.metadata["start_index"]
                out.write(json.dumps({"id": ids[c], "document_id": document_id, "source": path,
                                      "level": 0, "index": c, "parent_id": parent_id,
                                      "child_ids": [], "start_char": begin,
                                      "end_char": begin + len(child.page_content),
                                      "text": child.page_content}, ensure_ascii=False) + "\n")
"""


_ENTRY_POINT = "import sys; from spanchunk.cli import main; sys.exit(main())"
_COMPILE_PACKAGE = (
    "import compileall, os, spanchunk; folder = os.path.dirname(spanchunk.__file__); "
    "compileall.compile_dir(folder, quiet=1); print(folder)"
)


def make_folder(corpus: Path, copies: int, into: Path) -> int:
    """``copies`` copies of the corpus under ``into``; returns the bytes of text in all."""
    total = 0
    for copy in range(copies):
        target = into / f"copy{copy:02d}"
        shutil.copytree(corpus, target)
        total += sum(path.stat().st_size for path in target.rglob("*") if path.is_file())
    return total


def timed(command: list[str], repeat: int, *, fresh: bool = True) -> tuple[float, float]:
    """The best wall time of ``repeat`` runs of ``command`` (which must succeed), and the CPU
    time (user + system, all threads) of that run.

    With ``fresh``, the output of the run before is removed first, untimed: replacing a
    250 MB file made the rename pay for freeing the old one's blocks, which a first run
    never does (and a store left in place would make the next run incremental). Every run
    starts after an untimed ``sync``: the kernel writing the last run's 300 MB back to the
    disk took CPU from the next run (the later of two identical runs was up to 40% slower).
    """
    best = (float("inf"), 0.0)
    for _ in range(repeat):
        for output in command[command.index("-o") + 1 :] if "-o" in command and fresh else ():
            Path(output).unlink(missing_ok=True)
        os.sync()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = min(best, (wall, cpu))
    return best


def default_tree() -> str:
    """The Python installation's library folder (the standard library, and the packages
    installed beside it): tens of thousands of small files, source and bytecode."""
    import sysconfig  # noqa: PLC0415

    return sysconfig.get_paths()["stdlib"]


def tree_contents(tree: Path) -> tuple[int, int, int, int]:
    """Files and bytes of ``tree`` as the job sees them (hidden entries left out, folder
    links not followed): (files, bytes, text files, text bytes); a file is text when its
    first 8 KB hold no NUL byte."""
    files = total = text_files = text_bytes = 0
    for folder, names, filenames in os.walk(tree):
        names[:] = [name for name in names if not name.startswith(".")]
        for name in filenames:
            if name.startswith("."):
                continue
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            size = os.path.getsize(path)
            files += 1
            total += size
            with open(path, "rb") as handle:
                if b"\0" not in handle.read(8192):
                    text_files += 1
                    text_bytes += size
    return files, total, text_files, text_bytes


def tree_runs(
    tree: Path, temp: str, python: str, repeat: int
) -> tuple[list[str], dict[str, float]]:
    """The real tree's rows of the report, and its figures."""
    files, total, text_files, text_bytes = tree_contents(tree)
    text_mb = text_bytes / 1e6
    spanchunk = [python, "-c", _ENTRY_POINT, "chunk", str(tree), "--workers", "2"]
    timed([*spanchunk, "-o", f"{temp}/tree-warm.jsonl"], 1)  # the tree into the page cache
    Path(f"{temp}/tree-warm.jsonl").unlink()
    jsonl, jsonl_cpu = timed([*spanchunk, "-o", f"{temp}/tree.jsonl"], repeat)
    Path(f"{temp}/tree.jsonl").unlink()
    store, store_cpu = timed([*spanchunk, "-o", f"{temp}/tree.sqlite"], repeat)
    # The re-run's store must be one whose files' states are trusted: its files were
    # written long before the run (a library folder's are).
    rerun, rerun_cpu = timed([*spanchunk, "-o", f"{temp}/tree.sqlite"], repeat, fresh=False)
    print(f"tree .jsonl: {text_mb / jsonl:.0f} MB/s of text; store re-run {store / rerun:.1f}x")
    rows = [
        f"A real tree: `{tree}`, {files} files, {total / 1e6:.0f} MB, of which {text_files} "
        f"text files ({text_mb:.0f} MB of text) and {files - text_files} binary "
        f"({(total - text_bytes) / 1e6:.0f} MB, {100 * (files - text_files) / files:.0f}% of "
        "the files). MB/s are of its text.",
        "",
        "| run | seconds | MB/s of text | CPU seconds |",
        "|---|---:|---:|---:|",
        f"| .jsonl, 2 workers | {jsonl:.2f} | {text_mb / jsonl:.0f} | {jsonl_cpu:.2f} |",
        f"| .sqlite, 2 workers, first run | {store:.2f} | {text_mb / store:.0f} | "
        f"{store_cpu:.2f} |",
        f"| .sqlite re-run, unchanged tree | {rerun:.2f} | {text_mb / rerun:.0f} | "
        f"{rerun_cpu:.2f} |",
        "",
        "| bar | measured | met |",
        "|---|---:|---|",
        f"| tree .jsonl, 2 workers >= 150 MB/s of text | {text_mb / jsonl:.0f} MB/s | "
        f"{'yes' if text_mb / jsonl >= 150 else 'NO'} |",
        f"| tree .sqlite re-run >= 10x faster than the first run | {store / rerun:.1f}x | "
        f"{'yes' if store / rerun >= 10 else 'NO'} |",
        "",
    ]
    return rows, {"jsonl": jsonl, "store": store, "rerun": rerun}


def writer_costs(corpus: Path, repeat: int) -> dict[str, float]:
    """Seconds to write the corpus's chunks as JSON Lines, in this process, three ways."""
    import orjson  # noqa: PLC0415
    from spanchunk import Document, ParentChildChunker, _core  # noqa: PLC0415

    files = sorted(path for path in corpus.rglob("*") if path.is_file())
    datas = [path.read_bytes() for path in files]
    sources = [str(path) for path in files]
    chunker = ParentChildChunker()
    levels, fingerprint = chunker._levels(), chunker.fingerprint()

    def core() -> None:
        _core.write_documents([(levels, fingerprint)], datas, sources, "jsonl")

    def records() -> list[list[dict[str, object]]]:
        out = []
        for data, source in zip(datas, sources, strict=True):
            chunks = chunker.chunk_tree(Document(data.decode("utf-8"), source=source))
            chunker.clear()
            out.append(
                [
                    {
                        "id": c.id,
                        "document_id": c.document_id,
                        "source": source,
                        "level": c.level,
                        "index": c.index,
                        "parent_id": c.parent_id,
                        "child_ids": list(c.child_ids),
                        "start_char": c.start_char,
                        "end_char": c.end_char,
                        "start_byte": c.start_byte,
                        "end_byte": c.end_byte,
                        "text": c.text,
                    }
                    for c in chunks
                ]
            )
        return out

    def with_orjson() -> None:
        b"".join(orjson.dumps(r) + b"\n" for document in records() for r in document)

    def with_json() -> None:
        "".join(
            json.dumps(r, ensure_ascii=False) + "\n" for document in records() for r in document
        ).encode()

    costs = {}
    for name, work in [
        ("core writer (write_documents)", core),
        ("Chunk objects + dicts (no serialising)", records),
        ("Chunk objects + dicts + orjson.dumps", with_orjson),
        ("Chunk objects + dicts + json.dumps", with_json),
    ]:
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            work()
            best = min(best, time.perf_counter() - started)
        costs[name] = best
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=os.environ.get("SPANCHUNK_CORPUS", DEFAULT_CORPUS))
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--output", default=str(RESULTS))
    parser.add_argument(
        "--tree", default=default_tree(), help="a real tree of many small files (read only)"
    )
    parser.add_argument("--skip-folder", action="store_true", help="time the tree alone")
    args = parser.parse_args()
    corpus = Path(args.corpus)
    python = sys.executable
    load = os.getloadavg()[0]
    if args.skip_folder:
        with tempfile.TemporaryDirectory(prefix="spanchunk-cli-bench-") as temp:
            rows, _ = tree_runs(Path(args.tree), temp, python, args.repeat)
        print("\n".join(rows))
        return
    with tempfile.TemporaryDirectory(prefix="spanchunk-cli-bench-") as temp:
        folder = Path(temp) / "folder"
        folder.mkdir()
        size = make_folder(corpus, args.copies, folder)
        megabytes = size / 1e6
        # Bytecode compiled first, as `pip install` does: in a source tree (and with
        # PYTHONDONTWRITEBYTECODE set) every run would compile the package anew, a third of
        # its startup.
        package = subprocess.run(
            [python, "-c", _COMPILE_PACKAGE], check=True, capture_output=True, text=True
        ).stdout.strip()
        # What the installed `spanchunk` command runs (pip's entry point script), not
        # `python -m spanchunk`, whose runpy adds 5-10 ms to every start.
        spanchunk = [python, "-c", _ENTRY_POINT, "chunk", str(folder)]
        # One untimed run first: the series had started on a folder just copied, whose
        # first reads paid for it (the first timed rows came out 20% slower than the same
        # command run again at the end).
        timed([*spanchunk, "-o", f"{temp}/warm.jsonl"], 1)
        Path(f"{temp}/warm.jsonl").unlink()
        runs: list[tuple[str, float]] = []
        cpus: dict[str, float] = {}
        for name, extra in [
            (".jsonl, 2 workers (threads)", ["--workers", "2", "-o", f"{temp}/o.jsonl"]),
            (".jsonl, 1 worker", ["--workers", "1", "-o", f"{temp}/o.jsonl"]),
            (".jsonl, 2 workers, --sync (flushed to the disk before the rename)",
             ["--workers", "2", "--sync", "-o", f"{temp}/o.jsonl"]),
            (".jsonl, 2 workers (processes)",
             ["--workers", "2", "--pool", "process", "-o", f"{temp}/o.jsonl"]),
            (".parquet, 2 workers (threads)", ["--workers", "2", "-o", f"{temp}/o.parquet"]),
            (".parquet, 1 worker", ["--workers", "1", "-o", f"{temp}/o.parquet"]),
            (".parquet --compression lz4, 2 workers",
             ["--workers", "2", "--compression", "lz4", "-o", f"{temp}/o.parquet"]),
            (".parquet --compression none, 2 workers",
             ["--workers", "2", "--compression", "none", "-o", f"{temp}/o.parquet"]),
            (".sqlite, 1 worker", ["--workers", "1", "-o", f"{temp}/o.sqlite"]),
            (".sqlite, 2 workers (threads)", ["--workers", "2", "-o", f"{temp}/o.sqlite"]),
            (".sqlite re-run, unchanged folder, 2 workers",
             ["--workers", "2", "-o", f"{temp}/o.sqlite"]),
        ]:  # fmt: skip
            # The re-run goes into the store the run before it left.
            fresh = "re-run" not in name
            wall, cpus[name] = timed([*spanchunk, *extra], args.repeat, fresh=fresh)
            runs.append((name, wall))
            print(f"{name}: {megabytes / wall:.0f} MB/s", flush=True)
            # Each series starts with the page cache of the one before it gone (but the
            # store the re-run needs): a 320 MB output left cached made the next series'
            # runs 5-20% slower on the benchmark machine, whose fresh memory is slow to
            # touch.
            if name != ".sqlite, 2 workers (threads)":
                Path(extra[extra.index("-o") + 1]).unlink(missing_ok=True)
        script = Path(temp) / "langchain_job.py"
        script.write_text(LANGCHAIN_JOB, encoding="utf-8")
        langchain, langchain_cpu = timed([python, str(script), str(folder), f"{temp}/lc.jsonl"], 1)
        Path(f"{temp}/lc.jsonl").unlink()
        print(f"LangChain: {megabytes / langchain:.1f} MB/s", flush=True)
        startup, startup_cpu = timed([python, "-c", "import spanchunk.cli"], args.repeat)
        tree_rows, _ = tree_runs(Path(args.tree), temp, python, args.repeat)
    costs = writer_costs(corpus, args.repeat)
    seconds = dict(runs)
    jsonl2 = seconds[".jsonl, 2 workers (threads)"]
    parquet2 = seconds[".parquet, 2 workers (threads)"]
    sqlite2 = seconds[".sqlite, 2 workers (threads)"]
    rerun = seconds[".sqlite re-run, unchanged folder, 2 workers"]
    corpus_mb = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file()) / 1e6
    lines = [
        "# The command line job (`benches/cli.py`)",
        "",
        f"{megabytes:.1f} MB: the corpus copied {args.copies} times; default settings "
        "(parents 2000 chars, children 400). Whole processes, startup included, best of "
        f"{args.repeat} (LangChain: one run), spanchunk imported from `{package}` with its "
        f"bytecode compiled (as `pip install` leaves it). Python {platform.python_version()}, "
        f"{os.cpu_count()} cores ({platform.machine()}); load average before the run "
        f"{load:.1f}, after {os.getloadavg()[0]:.1f} (a shared machine: above the core "
        "count, every figure here is low).",
        "",
        "CPU seconds are user + system time of the process, all its threads: on a loaded "
        "machine they grow far less than wall time, so MB per CPU second is the steadier "
        "figure.",
        "",
        "| run | seconds | MB/s | CPU seconds | MB per CPU second |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| spanchunk {name} | {s:.2f} | {megabytes / s:.0f} | {cpus[name]:.2f} | "
            f"{megabytes / cpus[name]:.0f} |"
            for name, s in runs
        ),
        f"| LangChain two-level + `json.dumps`, one process | {langchain:.2f} | "
        f"{megabytes / langchain:.1f} | {langchain_cpu:.2f} | {megabytes / langchain_cpu:.1f} |",
        f"| (`python -c 'import spanchunk.cli'`, startup alone) | {startup:.2f} | | "
        f"{startup_cpu:.2f} | |",
        "",
        "| bar | measured | met |",
        "|---|---:|---|",
        f"| .jsonl, 2 workers >= 200 MB/s | {megabytes / jsonl2:.0f} MB/s | "
        f"{'yes' if megabytes / jsonl2 >= 200 else 'NO'} |",
        f"| .parquet, 2 workers >= 200 MB/s | {megabytes / parquet2:.0f} MB/s | "
        f"{'yes' if megabytes / parquet2 >= 200 else 'NO'} |",
        f"| 2 workers >= 1.7x 1 worker (.jsonl) | "
        f"{seconds['.jsonl, 1 worker'] / jsonl2:.2f}x | "
        f"{'yes' if seconds['.jsonl, 1 worker'] / jsonl2 >= 1.7 else 'NO'} |",
        f"| 2 workers >= 1.7x 1 worker (.parquet) | "
        f"{seconds['.parquet, 1 worker'] / parquet2:.2f}x | "
        f"{'yes' if seconds['.parquet, 1 worker'] / parquet2 >= 1.7 else 'NO'} |",
        f"| .sqlite, 2 workers >= 50 MB/s | {megabytes / sqlite2:.0f} MB/s | "
        f"{'yes' if megabytes / sqlite2 >= 50 else 'NO'} |",
        f"| .sqlite re-run on the unchanged folder >= 10x faster than the first run | "
        f"{sqlite2 / rerun:.1f}x | {'yes' if sqlite2 / rerun >= 10 else 'NO'} |",
        f"| 2 workers >= 1.7x 1 worker (.sqlite) | "
        f"{seconds['.sqlite, 1 worker'] / sqlite2:.2f}x | "
        f"{'yes' if seconds['.sqlite, 1 worker'] / sqlite2 >= 1.7 else 'NO'} |",
        f"| spanchunk (.jsonl, 2 workers) >= 20x LangChain | {langchain / jsonl2:.0f}x | "
        f"{'yes' if langchain / jsonl2 >= 20 else 'NO'} |",
        f"| (CPU time: LangChain / spanchunk .jsonl) | "
        f"{langchain_cpu / cpus['.jsonl, 2 workers (threads)']:.0f}x | |",
        "",
        *tree_rows,
        f"Writing JSON Lines in one process, one thread, the corpus once ({corpus_mb:.1f} MB), "
        "cutting included:",
        "",
        "| writer | seconds | MB/s |",
        "|---|---:|---:|",
        *(f"| {name} | {s:.3f} | {corpus_mb / s:.0f} |" for name, s in costs.items()),
        "",
    ]
    Path(args.output).write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
