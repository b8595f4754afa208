"""Scale, linearity, pathological inputs and parallel speed-up, against docs/performance.md's bars.

Every figure is measured with ``ParentChildChunker(2000, 400).spans(text)`` (integers only),
each group in a fresh subprocess (with a time limit, so a quadratic input shows as a failure
instead of hanging the run):

- **100 MB document**: the corpus concatenated and repeated to 100 MB of UTF-8. Time, MB/s,
  and the peak memory beyond the text itself: the text is built and handed to the core once
  (so Python's cached UTF-8 copy of it is part of the baseline), the peak-RSS mark is reset
  (``/proc/self/clear_refs``), and the peak (``VmHWM``) during ``spans`` minus the resident
  size before it is compared with the text's UTF-8 size. Bar: <= 2x.
- **Linearity**: the whole corpus concatenated once (about 5 MB), then 2x, 4x and 8x of it;
  the ratio of each doubling's time. Bar: <= 2.2x.
- **Pathological inputs**, 10 MB each, at 1x and 2x: no separator (``"x" * n``), newlines
  only, one emoji ZWJ sequence repeated, CJK with no punctuation, ``"a "`` repeated and
  ``"\\r\\n"`` repeated. Bar: the 2x time <= 2.2x the 1x time. Their peak memory ratio is
  reported too (the bar is for the 100 MB document; a ratio over 2x is flagged).
- **Overlap on grapheme-only text**: the emoji ZWJ sequence repeated, 1, 2, 4 and 8 MB, cut by
  ``ParentChildChunker(2000, 400, child_overlap=100).spans`` (the children are cut between
  graphemes and no separator boundary is there to overlap at). Bar: each doubling <= 2.2x;
  user CPU per MB shows whether the engine's own work grows faster than the text.
- **Parallel**: ``spans_many`` and ``chunk_many`` over every corpus file as one batch, with
  ``workers=2`` against ``workers=1``. Bar: ``spans_many`` >= 1.7x; ``chunk_many`` (which builds
  the ``Chunk`` objects in Python, in one thread) is reported, and so is ``spans_many`` on the
  same files in a shuffled order, which shows how much the split of the batch matters.

Times are the best of several runs, the sizes of one group measured in interleaved rounds so
that a busy neighbour slows them alike. Install a release build first (``maturin develop
--release`` or ``pip install .``).

Usage (from the repository root)::

    python benches/scale.py [--corpus DIR] [--out benches/results]

The corpus is ``--corpus``, else ``$SPANCHUNK_CORPUS``, else ``../shared/corpus`` next to the
repository. Writes ``scale.md`` and ``scale.json`` in ``--out`` and prints the Markdown.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import itertools
import json
import math
import os
import platform
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy
import spanchunk
from spanchunk import ParentChildChunker, _core

# benches/ is on sys.path when this file runs as a script: the corpus is found as
# throughput.py finds it.
from throughput import corpus_root

REPOSITORY = Path(__file__).resolve().parent.parent
MB = 1_000_000

DOCUMENT_BYTES = 100 * MB
PATHOLOGICAL_BYTES = 10 * MB
LINEAR_SCALES = (1, 2, 4, 8)
OVERLAP_SCALES_MB = (1, 2, 4, 8)
MEMORY_BAR = 2.0
LINEAR_BAR = 2.2
PARALLEL_BAR = 1.7
# A subprocess that runs past this is reported as a failure (quadratic or stuck).
GROUP_TIMEOUT_S = 300
# Timed rounds per group: at least MIN_ROUNDS, more while under ROUND_BUDGET_S, at most MAX.
# Runs of a few milliseconds get many rounds: on a shared machine the best of many is what
# shows the code's own time.
MIN_ROUNDS, MAX_ROUNDS, ROUND_BUDGET_S = 3, 200, 4.0

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"  # one grapheme, 25 bytes
CJK = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 4000))  # ideographs, no punctuation

# kind -> (label, builder of a text of about n UTF-8 bytes)
PATHOLOGICAL: dict[str, tuple[str, Callable[[int], str]]] = {
    "no-separator": ('no separator: `"x" * n`', lambda n: "x" * n),
    "newlines": ('newlines only: `"\\n" * n`', lambda n: "\n" * n),
    "emoji-zwj": (
        "one emoji ZWJ sequence (👨‍👩‍👧‍👦, 7 code points) repeated",
        lambda n: FAMILY * (n // 25),
    ),
    "cjk": (
        "CJK ideographs, no punctuation",
        lambda n: (CJK * (n // (3 * len(CJK)) + 1))[: n // 3],
    ),
    "a-space": ('`"a " * n`', lambda n: "a " * (n // 2)),
    "crlf": ('`"\\r\\n" * n`', lambda n: "\r\n" * (n // 2)),
}


# -------------------------------------------------------------------------------- corpus


def load_corpus(root: Path) -> list[str]:
    """Every regular, non-hidden file in the sub-folders of root, sorted, as UTF-8 text
    (byte order marks and line ends kept, as the CLI reads files)."""
    texts = []
    for folder in sorted(path for path in root.iterdir() if path.is_dir()):
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(root)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            texts.append(path.read_bytes().decode("utf-8"))
    return texts


def corpus_text(texts: list[str], copies: int = 1) -> str:
    """The corpus files joined by blank lines, the whole repeated copies times."""
    return "\n\n".join(["\n\n".join(texts)] * copies)


def corpus_text_of_size(texts: list[str], target_bytes: int) -> str:
    """The corpus repeated and cut (at a char) to about target_bytes of UTF-8."""
    once = corpus_text(texts)
    copies = math.ceil(target_bytes / len(once.encode("utf-8")))
    text = corpus_text(texts, copies)
    total = len(text.encode("utf-8"))
    return text[: round(len(text) * target_bytes / total)]


def utf8_size(text: str) -> int:
    return len(text.encode("utf-8"))


# -------------------------------------------------------------------------------- memory


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    """Resets VmHWM to the current RSS (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return _status_kib("VmHWM") is not None


def _maxrss_bytes() -> int:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB elsewhere
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def _trim_heap() -> None:
    """Hands memory freed by earlier steps back to the system (glibc), so that the job's
    allocations show in the resident size instead of reusing pages already counted."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


def peak_growth(job: Callable[[], object]) -> tuple[int, int, float, str]:
    """(resident bytes before, peak bytes beyond them during job, seconds, method)."""
    gc.collect()
    _trim_heap()
    if _reset_peak():
        before = (_status_kib("VmRSS") or 0) * 1024
        started = time.perf_counter()
        job()
        seconds = time.perf_counter() - started
        peak = (_status_kib("VmHWM") or 0) * 1024
        return before, max(0, peak - before), seconds, "VmHWM"
    # Without a resettable mark, ru_maxrss only moves when the job beats earlier peaks, so
    # this can understate the growth; the method is reported with the figure.
    before = _maxrss_bytes()
    started = time.perf_counter()
    job()
    seconds = time.perf_counter() - started
    return before, max(0, _maxrss_bytes() - before), seconds, "ru_maxrss"


# -------------------------------------------------------------------------------- child jobs


def _chunker() -> ParentChildChunker:
    return ParentChildChunker(2000, 400)


def _prime(text: str) -> None:
    """Hands text to the core once, so Python's cached UTF-8 copy of a non-ASCII str exists
    before the baseline is taken (it is part of "the text itself")."""
    _core.text_id(text)


def _rounds(run_round: Callable[[], float], max_rounds: int = MAX_ROUNDS) -> None:
    """Runs timed rounds: at least MIN_ROUNDS, more while under the budget, at most max."""
    spent = 0.0
    for round_number in range(max_rounds):
        if round_number >= MIN_ROUNDS and spent >= ROUND_BUDGET_S:
            break
        spent += run_round()


def job_document(texts: list[str]) -> dict[str, Any]:
    """The 100 MB document: time, MB/s and peak memory beyond the text."""
    text = corpus_text_of_size(texts, DOCUMENT_BYTES)
    size = utf8_size(text)
    _prime(text)
    chunker = _chunker()
    result: dict[str, Any] = {}

    def spans() -> None:
        result["rows"] = len(chunker.spans(text))

    before, growth, first, method = peak_growth(spans)
    times = [first]

    def one_round() -> float:
        started = time.perf_counter()
        spans()
        times.append(time.perf_counter() - started)
        return times[-1]

    _rounds(one_round)
    seconds = min(times)
    return {
        "bytes": size,
        "chars": len(text),
        "rows": result["rows"],
        "seconds": seconds,
        "mb_s": size / MB / seconds,
        "runs": len(times),
        "rss_before": before,
        "peak_growth": growth,
        "memory_ratio": growth / size,
        "memory_method": method,
    }


def job_sizes(
    texts_by_size: list[str], chunker: ParentChildChunker | None = None
) -> list[dict[str, Any]]:
    """Best time and first-run peak memory of spans for each text, rounds interleaved."""
    chunker = chunker or _chunker()
    rows: list[dict[str, Any]] = []
    for text in texts_by_size:
        _prime(text)
    for text in texts_by_size:
        before, growth, first, method = peak_growth(lambda text=text: chunker.spans(text))
        size = utf8_size(text)
        rows.append(
            {
                "bytes": size,
                "chars": len(text),
                "rows": len(chunker.spans(text)),
                "times": [first],
                "rss_before": before,
                "peak_growth": growth,
                "memory_ratio": growth / size if size else 0.0,
                "memory_method": method,
            }
        )

    def one_round() -> float:
        spent = 0.0
        for row, text in zip(rows, texts_by_size, strict=True):
            usage = resource.getrusage(resource.RUSAGE_SELF)
            started = time.perf_counter()
            chunker.spans(text)
            row["times"].append(time.perf_counter() - started)
            after = resource.getrusage(resource.RUSAGE_SELF)
            # User CPU is the engine's own work; system CPU is mostly the kernel serving page
            # faults, which grows with the memory a run touches.
            row["user"].append(after.ru_utime - usage.ru_utime)
            row["system"].append(after.ru_stime - usage.ru_stime)
            spent += row["times"][-1]
        return spent

    for row in rows:
        row["user"], row["system"] = [], []
    _rounds(one_round)
    for row in rows:
        row["seconds"] = min(row["times"])
        row["mb_s"] = row["bytes"] / MB / row["seconds"]
        row["runs"] = len(row.pop("times"))
        row["user_seconds"] = min(row.pop("user"))
        row["system_seconds"] = min(row.pop("system"))
    return rows


def job_linear(texts: list[str]) -> list[dict[str, Any]]:
    return job_sizes([corpus_text(texts, scale) for scale in LINEAR_SCALES])


def job_pathological(kind: str) -> list[dict[str, Any]]:
    build = PATHOLOGICAL[kind][1]
    return job_sizes([build(PATHOLOGICAL_BYTES), build(2 * PATHOLOGICAL_BYTES)])


def job_overlap_emoji() -> list[dict[str, Any]]:
    """The emoji ZWJ sequence repeated at each size, children with an overlap of 100."""
    texts = [FAMILY * (size * MB // 25) for size in OVERLAP_SCALES_MB]
    return job_sizes(texts, ParentChildChunker(2000, 400, child_overlap=100))


def job_parallel(texts: list[str]) -> dict[str, Any]:
    """spans_many and chunk_many over every corpus file, workers=1 against workers=2."""
    chunker = _chunker()
    size = sum(utf8_size(text) for text in texts)
    chunker.spans_many(texts, workers=2)  # warm-up; primes every text's UTF-8 copy
    figures: dict[str, Any] = {"files": len(texts), "bytes": size}
    # The same batch in another order shows how much of the speed-up depends on how the
    # core's thread pool splits the batch (the corpus order puts the four books together).
    shuffled = texts[:]
    random.Random(0).shuffle(shuffled)
    calls: dict[str, Callable[[int], object]] = {
        "spans_many": lambda workers: chunker.spans_many(texts, workers=workers),
        "chunk_many": lambda workers: chunker.chunk_many(texts, workers=workers),
        "spans_many_shuffled": lambda workers: chunker.spans_many(shuffled, workers=workers),
    }
    for name, call in calls.items():
        # (wall, process CPU) seconds per run; CPU / wall near 2 with workers=2 shows both
        # threads ran, so a low speed-up then means the cores were busy with other work.
        times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}

        def one_round(call: Callable[[int], object] = call, times: dict = times) -> float:
            spent = 0.0
            for workers in (1, 2):
                cpu, started = time.process_time(), time.perf_counter()
                call(workers)
                wall = time.perf_counter() - started
                times[workers].append((wall, time.process_time() - cpu))
                spent += wall
                chunker.clear()
            return spent

        _rounds(one_round)
        best = {workers: min(values) for workers, values in times.items()}
        figures[name] = {
            "seconds_1": best[1][0],
            "seconds_2": best[2][0],
            "speedup": best[1][0] / best[2][0],
            "cpu_per_wall_2": sum(cpu for _, cpu in times[2]) / sum(wall for wall, _ in times[2]),
            "runs": len(times[1]),
        }
    return figures


def run_child(job: str, argument: str, corpus: Path) -> int:
    texts = load_corpus(corpus)
    if job == "document":
        result: Any = job_document(texts)
    elif job == "linear":
        result = job_linear(texts)
    elif job == "pathological":
        result = job_pathological(argument)
    elif job == "overlap-emoji":
        result = job_overlap_emoji()
    elif job == "parallel":
        result = job_parallel(texts)
    else:
        raise SystemExit(f"unknown job {job!r}")
    json.dump(result, sys.stdout)
    return 0


# -------------------------------------------------------------------------------- parent


def in_subprocess(job: str, corpus: Path, argument: str = "") -> tuple[Any, str | None]:
    """(result, None), or (None, why) when the job failed or ran out of time."""
    command = [sys.executable, __file__, "--job", job, "--corpus", str(corpus)]
    if argument:
        command += ["--argument", argument]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=GROUP_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"no result within {GROUP_TIMEOUT_S} s"
    if done.returncode != 0:
        return None, f"exit {done.returncode}: {done.stderr.strip()[-500:]}"
    print(f"  {job} {argument} done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return json.loads(done.stdout), None


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "spanchunk": spanchunk.__version__,
        "spanchunk_path": str(Path(spanchunk.__file__).parent),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "machine": platform.machine(),
        "system": platform.system(),
        "cpus": os.cpu_count(),
        "load_average_at_start": load,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def megabytes(size: int) -> str:
    return f"{size / MB:.1f}"


def overlap_lines(overlap: dict[str, Any]) -> list[str]:
    """The Markdown section of the emoji ZWJ sequence with overlap."""
    lines = [
        "",
        "## Overlap on grapheme-only text (emoji ZWJ sequence, 1 to 8 MB)",
        "",
        "`ParentChildChunker(2000, 400, child_overlap=100).spans` on 👨‍👩‍👧‍👦 repeated. "
        "User CPU per MB flat means the engine's work is linear; wall time per doubling above "
        "2x with flat user CPU is memory (page faults, caches), not the algorithm.",
        "",
    ]
    if "error" in overlap:
        return [*lines, f"FAIL: {overlap['error']}"]
    lines += [
        "| MB | seconds | MB/s | time / previous | user CPU ms per MB | bar | result |",
        "|---:|---:|---:|---:|---:|---|---|",
    ]
    for row in overlap["rows"]:
        ratio = row.get("ratio")
        doubling = (
            f"{ratio:.2f}x | {{cpu}} | <= {LINEAR_BAR:g}x | {verdict(row['pass'])}"
            if ratio is not None
            else " | {cpu} | |"
        )
        cpu = f"{1000 * row['user_seconds'] / (row['bytes'] / MB):.1f}"
        lines.append(
            f"| {megabytes(row['bytes'])} | {row['seconds']:.4f} | {row['mb_s']:.1f} | "
            + doubling.format(cpu=cpu)
            + " |"
        )
    return lines


def markdown(report: dict[str, Any]) -> str:
    info = report["machine"]
    load = info["load_average_at_start"]
    lines = [
        "# spanchunk at scale",
        "",
        f"`python benches/scale.py`: spanchunk {info['spanchunk']}, Python {info['python']}, "
        f"{info['machine']}, {info['cpus']} CPUs"
        + (f" (load average {load[0]:.2f} at start)" if load else "")
        + f", {info['date']}. `ParentChildChunker(2000, 400).spans(text)` unless said; "
        "times are the best of several runs; MB = 10^6 bytes of UTF-8.",
        "",
        "## One 100 MB document",
        "",
    ]
    document = report["document"]
    if "error" in document:
        lines.append(f"FAIL: {document['error']}")
    else:
        lines += [
            "| MB | chars | chunks | seconds | MB/s | RSS before (MB) | peak beyond it (MB) "
            "| peak / text | bar | result |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---|---|",
            f"| {megabytes(document['bytes'])} | {document['chars']:,} | {document['rows']:,} "
            f"| {document['seconds']:.3f} | {document['mb_s']:.1f} "
            f"| {megabytes(document['rss_before'])} | {megabytes(document['peak_growth'])} "
            f"| {document['memory_ratio']:.3f}x | <= {MEMORY_BAR:g}x "
            f"| {verdict(document['memory_pass'])} |",
            "",
            f"The baseline holds the text (the `str` and its cached UTF-8 copy); peak measured "
            f"with {document['memory_method']}.",
        ]
    lines += ["", "## Linearity (corpus text, 1x to 8x)", ""]
    linear = report["linear"]
    if "error" in linear:
        lines.append(f"FAIL: {linear['error']}")
    else:
        lines += [
            "| scale | MB | seconds | MB/s | time / previous | bar | result |",
            "|---:|---:|---:|---:|---:|---|---|",
        ]
        for row in linear["rows"]:
            ratio = row.get("ratio")
            lines.append(
                f"| {row['scale']}x | {megabytes(row['bytes'])} | {row['seconds']:.4f} "
                f"| {row['mb_s']:.1f} | "
                + (
                    f"{ratio:.2f}x | <= {LINEAR_BAR:g}x | {verdict(row['pass'])} |"
                    if ratio is not None
                    else "| | |"
                )
            )
    lines += [
        "",
        "## Pathological inputs (10 MB and 20 MB)",
        "",
        "Pairs of figures are 1x / 2x (10 MB / 20 MB). CPU seconds are the least of the runs "
        "(getrusage): user is the engine's work, system mostly the kernel's page faults.",
        "",
        "| input | MB | seconds | MB/s | 2x time / 1x | bar | result | chunks (1x) "
        "| user / system CPU s | peak memory / text |",
        "|---|---:|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for kind, entry in report["pathological"].items():
        label = PATHOLOGICAL[kind][0]
        if "error" in entry:
            lines.append(f"| {label} | | | | | <= {LINEAR_BAR:g}x | FAIL: {entry['error']} | | | |")
            continue
        one, two = entry["rows"]
        lines.append(
            f"| {label} | {megabytes(one['bytes'])} / {megabytes(two['bytes'])} "
            f"| {one['seconds']:.4f} / {two['seconds']:.4f} "
            f"| {one['mb_s']:.1f} / {two['mb_s']:.1f} | {entry['ratio']:.2f}x "
            f"| <= {LINEAR_BAR:g}x | {verdict(entry['pass'])} | {one['rows']:,} "
            f"| {one['user_seconds']:.2f} / {one['system_seconds']:.2f}, "
            f"{two['user_seconds']:.2f} / {two['system_seconds']:.2f} "
            f"| {one['memory_ratio']:.2f}x, {two['memory_ratio']:.2f}x"
            + (" (over 2x)" if max(one["memory_ratio"], two["memory_ratio"]) > MEMORY_BAR else "")
            + " |"
        )
    lines += overlap_lines(report["overlap_emoji"])
    lines += ["", "## Parallel: every corpus file as one batch, workers=2 against 1", ""]
    parallel = report["parallel"]
    if "error" in parallel:
        lines.append(f"FAIL: {parallel['error']}")
    else:
        lines += [
            f"{parallel['files']} files, {megabytes(parallel['bytes'])} MB. Speed-up: best "
            "workers=1 time over best workers=2 time. CPU / wall: the cores the workers=2 "
            "runs kept busy on average (2 at most); below 2, other work had the second core.",
            "",
            "| call | workers=1 (s) | workers=2 (s) | speed-up | CPU / wall at workers=2 "
            "| bar | result |",
            "|---|---:|---:|---:|---:|---|---|",
        ]
        labels = {
            "spans_many": "`spans_many`",
            "chunk_many": "`chunk_many`",
            "spans_many_shuffled": "`spans_many`, the files shuffled (seed 0)",
        }
        for name, label in labels.items():
            if name not in parallel:
                continue
            row = parallel[name]
            bar = f">= {PARALLEL_BAR:g}x" if name == "spans_many" else "reported"
            result = verdict(row["pass"]) if name == "spans_many" else "-"
            lines.append(
                f"| {label} | {row['seconds_1']:.4f} | {row['seconds_2']:.4f} "
                f"| {row['speedup']:.2f}x | {row['cpu_per_wall_2']:.2f} | {bar} | {result} |"
            )
    lines += ["", f"Overall: {verdict(report['passed'])}", ""]
    return "\n".join(lines)


def measure_overlap(corpus: Path, passes: list[bool]) -> dict[str, Any]:
    """The emoji ZWJ sequence with overlap, in its subprocess; appends each doubling's verdict."""
    rows, error = in_subprocess("overlap-emoji", corpus)
    if rows is None:
        passes.append(False)
        return {"error": error}
    for previous, row in itertools.pairwise(rows):
        row["ratio"] = row["seconds"] / previous["seconds"]
        row["pass"] = row["ratio"] <= LINEAR_BAR
        passes.append(row["pass"])
    return {"rows": rows}


def measure_all(report: dict[str, Any], corpus: Path) -> list[bool]:
    """Runs every group in its subprocess, fills report, returns the verdict of each bar."""
    passes: list[bool] = []

    document, error = in_subprocess("document", corpus)
    if document is None:
        report["document"] = {"error": error}
        passes.append(False)
    else:
        document["memory_pass"] = document["memory_ratio"] <= MEMORY_BAR
        report["document"] = document
        passes.append(document["memory_pass"])

    rows, error = in_subprocess("linear", corpus)
    if rows is None:
        report["linear"] = {"error": error}
        passes.append(False)
    else:
        for scale, row in zip(LINEAR_SCALES, rows, strict=True):
            row["scale"] = scale
        for previous, row in itertools.pairwise(rows):
            row["ratio"] = row["seconds"] / previous["seconds"]
            row["pass"] = row["ratio"] <= LINEAR_BAR
            passes.append(row["pass"])
        report["linear"] = {"rows": rows}

    report["pathological"] = {}
    for kind in PATHOLOGICAL:
        rows, error = in_subprocess("pathological", corpus, kind)
        if rows is None:
            report["pathological"][kind] = {"error": error}
            passes.append(False)
            continue
        ratio = rows[1]["seconds"] / rows[0]["seconds"]
        report["pathological"][kind] = {"rows": rows, "ratio": ratio, "pass": ratio <= LINEAR_BAR}
        passes.append(ratio <= LINEAR_BAR)

    report["overlap_emoji"] = measure_overlap(corpus, passes)

    parallel, error = in_subprocess("parallel", corpus)
    if parallel is None:
        report["parallel"] = {"error": error}
        passes.append(False)
    else:
        for figures in parallel.values():
            if isinstance(figures, dict):
                figures["pass"] = figures["speedup"] >= PARALLEL_BAR
        passes.append(parallel["spans_many"]["pass"])
        report["parallel"] = parallel

    return passes


def main(argv: list[str] | None = None) -> int:
    """Run every group in a subprocess, write scale.md and scale.json, print the Markdown."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--corpus", metavar="DIR", help="corpus folder (its sub-folders)")
    parser.add_argument("--out", default=str(REPOSITORY / "benches" / "results"), metavar="DIR")
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--argument", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    corpus = corpus_root(args.corpus).resolve()
    if not corpus.is_dir():
        print(
            f"scale: no corpus at {corpus}; pass --corpus DIR or set SPANCHUNK_CORPUS",
            file=sys.stderr,
        )
        return 1
    if args.job:
        return run_child(args.job, args.argument, corpus)

    report: dict[str, Any] = {
        "machine": machine(),
        "bars": {
            "memory_ratio_max": MEMORY_BAR,
            "doubling_ratio_max": LINEAR_BAR,
            "spans_many_speedup_min": PARALLEL_BAR,
        },
    }
    passes = measure_all(report, corpus)
    report["passed"] = all(passes)
    text = markdown(report)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "scale.md").write_text(text, encoding="utf-8")
    (out / "scale.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(text)
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
