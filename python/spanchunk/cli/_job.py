"""The chunk job: files read and cut in batches on a pool of workers, written in input order.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/cli/_job.py``.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from spanchunk import _core
from spanchunk.chunkers import HierarchicalChunker, hooks
from spanchunk.chunkers.code import language_of
from spanchunk.cli._files import File

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

BATCH_BYTES = 1 << 20
BATCH_FILES = 256
# A file is binary, as git decides, when its first 8 KB hold a NUL byte (unless they start
# with a UTF-16 or UTF-32 byte order mark: such text is decoded).
BINARY_PROBE = 8192
BINARY_MESSAGE = "binary (a NUL byte in the first 8 KB)"

# The kinds of skipped files, as the summary counts them: `_core.write_files` reports its
# files' failures in these words (`rust/job/batch.rs`).
BINARY = "binary"
NOT_UTF8 = "not UTF-8"
CHANGED = "changed while read"
NOT_CHUNKED = "chunking failed"

MARKDOWN_SUFFIXES = (".md", ".markdown")


class Chunkers(NamedTuple):
    """The chunker of each file: Markdown parents for Markdown files, code parents for
    source code, plain ones otherwise."""

    text: HierarchicalChunker
    markdown: HierarchicalChunker
    format: str
    #: The command line's settings of the run, by option (``child_size``: 400, ...), as a
    #: store records them.
    settings: dict[str, Any] | None = None
    #: ``--input-encoding``: the files' encoding when it is not UTF-8 (None: UTF-8, or
    #: UTF-16 or UTF-32 with a byte order mark).
    input_encoding: str | None = None
    #: The code chunkers by language (``--format auto`` and ``code``), in the core's order.
    code: tuple[tuple[str, HierarchicalChunker], ...] = ()
    #: ``--language``: the language of every file with ``--format code``.
    language: str | None = None

    def is_markdown(self, path: str) -> bool:
        """Whether ``path`` is cut as Markdown, by ``--format`` (auto, and code without
        ``--language``: by its suffix)."""
        by_suffix = self.format == "auto" or (self.format == "code" and self.language is None)
        return self.format == "markdown" or (by_suffix and path.lower().endswith(MARKDOWN_SUFFIXES))

    def all(self) -> list[HierarchicalChunker]:
        """Every chunker, in the order of ``chunker_index``: text, Markdown, then each
        language's."""
        return [self.text, self.markdown, *(chunker for _language, chunker in self.code)]

    def chunker_index(self, path: str) -> int:
        """The position in ``all()`` of the chunker of ``path``, by ``--format`` (code: its
        ``--language``, else by its suffix; a file of no known language as text)."""
        if self.is_markdown(path):
            return 1
        if self.format != "code":
            return 0
        language = self.language if self.format == "code" else None
        language = language or language_of(path)
        for position, (name, _chunker) in enumerate(self.code):
            if name == language:
                return 2 + position
        return 0


class Part(NamedTuple):
    """What the core wrote for a run of consecutive files cut by one chunker."""

    written: Any
    sources: list[str]
    document_ids: list[str]


class BatchResult:
    """A batch's output and what happened to each of its files.

    ``documents`` counts every text file of the batch, ``bytes_read`` their bytes (their
    sizes as listed; for the store, as read); for a
    store, ``added``, ``replaced`` and ``unchanged`` split them (an unchanged file is read
    and hashed, not cut).
    """

    __slots__ = (
        "added",
        "bytes_read",
        "documents",
        "parts",
        "replaced",
        "sizes",
        "skipped_files",
        "skips",
        "unchanged",
    )

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.skips: list[tuple[str, str, str]] = []
        self.documents = 0
        self.bytes_read = 0
        self.sizes = _core.ChunkSizes()
        self.added = 0
        self.replaced = 0
        self.unchanged = 0
        #: For a store: the skipped files to record (``_store.SkippedFile``).
        self.skipped_files: list[Any] = []


class BatchJob(Protocol):
    """What a worker does with a batch of files (picklable, for a process pool)."""

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """Read, cut and prepare the output of one batch."""
        ...


def batches(
    files: Iterable[File], batch_bytes: int | None = None, batch_files: int | None = None
) -> Iterator[list[File]]:
    """Consecutive runs of files of about ``batch_bytes`` in all (a larger file alone), at
    most ``batch_files`` files each (None: ``BATCH_BYTES``, ``BATCH_FILES``)."""
    batch_bytes = BATCH_BYTES if batch_bytes is None else batch_bytes
    batch_files = BATCH_FILES if batch_files is None else batch_files
    batch: list[File] = []
    size = 0
    for file in files:
        batch.append(file)
        size += file.size
        if size >= batch_bytes or len(batch) >= batch_files:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def process_batch(job: CoreJob, batch: Sequence[File]) -> BatchResult:
    """Read, cut and write one batch (runs in a worker): one core call, which reads the files
    too and cuts each with its chunker (GIL released); for Parquet, it encodes the batch's
    row group too. With ``--input-encoding`` the files are read and decoded here, and the
    core takes their text."""
    result = BatchResult()
    sources = [file.path for file in batch]
    document_ids = [file.resolved or os.path.realpath(file.path) for file in batch]
    chunker_of = [job.chunkers.chunker_index(path) for path in sources]
    if job.chunkers.input_encoding is None and all(file.data is None for file in batch):
        written, failures, sizes = _core.write_files(
            job.core_chunkers,
            sources,
            sources,
            job.core_format,
            sum(file.size for file in batch),
            job.parquet,
            chunker_of,
            document_ids,
        )
    else:
        failures, datas, kept = [], [], []
        for position, file in enumerate(batch):
            data = read_in_python(file, job.chunkers.input_encoding)
            if isinstance(data, bytes):
                datas.append(data)
                kept.append(position)
                failures.append(None)
            else:
                failures.append(data)
        written, cut_failures, sizes = _core.write_documents(
            job.core_chunkers,
            datas,
            [sources[position] for position in kept],
            job.core_format,
            job.parquet,
            [chunker_of[position] for position in kept],
            [document_ids[position] for position in kept],
        )
        for position, failure in zip(kept, cut_failures, strict=True):
            failures[position] = failure
    for file, failure in zip(batch, failures, strict=True):
        if failure is None:
            result.documents += 1
            result.bytes_read += file.size
        else:
            kind, message = failure
            result.skips.append((file.path, kind, message))
    result.parts.append(Part(written, sources, []))
    result.sizes.merge(sizes)
    return result


def decode_input(data: bytes, encoding: str) -> bytes | str:
    """``data`` decoded from ``encoding`` and encoded as UTF-8 (what the core cuts), or the
    message saying why it cannot be."""
    try:
        return data.decode(encoding).encode("utf-8")
    except UnicodeDecodeError as error:
        return f"not {encoding} (byte 0x{data[error.start]:02x} at offset {error.start})"
    except UnicodeEncodeError as error:  # a decoder that made lone surrogates
        return f"not {encoding} (it decodes to a lone surrogate at char {error.start})"


def is_binary(head: bytes, encoding: str | None) -> bool:
    """Whether a file whose first bytes are ``head`` is binary, for every output alike: the
    core's rule (a NUL byte in the first ``BINARY_PROBE`` bytes, unless a UTF-16 or UTF-32
    byte order mark starts them), except that text of a wide ``--input-encoding`` (UTF-16,
    UTF-32: full of NUL bytes) never is."""
    if encoding is not None and encoding.lower().replace("_", "-").startswith(
        ("utf-16", "utf-32", "utf16", "utf32")
    ):
        return False
    return _core.is_binary(head[:BINARY_PROBE])


def read_in_python(file: File, encoding: str | None) -> bytes | tuple[str, str]:
    """A file's bytes (stdin's document: those it holds) as the core cuts them: decoded
    from ``encoding`` into UTF-8 when one is given; or (kind, message) of why it is skipped."""
    if file.data is not None:
        data = file.data
        if is_binary(data, encoding):
            return (BINARY, BINARY_MESSAGE)
    else:
        try:
            with open(file.path, "rb") as handle:
                head = handle.read(BINARY_PROBE)
                if is_binary(head, encoding):
                    return (BINARY, BINARY_MESSAGE)
                data = head + handle.read()
        except OSError as error:
            return ("unreadable", error.strerror or str(error))
    if encoding is None:
        return data
    decoded = decode_input(data, encoding)
    return (NOT_UTF8, decoded) if isinstance(decoded, str) else decoded


class CoreJob(NamedTuple):
    """The JSON Lines and Parquet job: the core cuts and writes each batch of files.

    ``core_chunkers`` is what ``_core.write_files`` takes of the chunkers (the text one,
    the Markdown one, then the code ones, ``Chunkers.all``): their levels and fingerprints,
    made once per run; ``parquet`` the Parquet file's ``_core.ParquetEncoder``.
    """

    chunkers: Chunkers
    core_format: str
    core_chunkers: list[tuple[list[Any], str]]
    parquet: Any = None

    @classmethod
    def of(cls, chunkers: Chunkers, core_format: str, parquet: Any = None) -> CoreJob:
        """The job of ``chunkers`` writing ``core_format``."""
        pairs = [(hooks.levels(chunker), chunker.fingerprint()) for chunker in chunkers.all()]
        return cls(chunkers, core_format, pairs, parquet)

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """``process_batch`` on this job's settings."""
        return process_batch(self, batch)

    def __reduce__(self) -> tuple[Any, ...]:
        # For a process pool: the core's splitters are made again from the chunkers there.
        return (CoreJob.of, (self.chunkers, self.core_format, self.parquet))


# The job of a process worker, set once by its initializer.
_PROCESS_JOB: BatchJob | None = None


def _start_process(job: BatchJob) -> None:
    global _PROCESS_JOB  # noqa: PLW0603  (one worker process, one job)
    _PROCESS_JOB = job


def _process_batch_in_process(batch: Sequence[File]) -> BatchResult:
    assert _PROCESS_JOB is not None
    return _PROCESS_JOB(batch)


def run_batches(
    files: Iterable[File],
    job: BatchJob,
    workers: int,
    pool: str,
    consume: Callable[[Sequence[File], BatchResult], None],
    *,
    sizes: tuple[int | None, int | None] = (None, None),
) -> None:
    """Every batch (``sizes``: its bytes and files at most, see ``batches``) through ``job``
    on ``workers`` workers of ``pool`` ("thread" or "process"), handed to ``consume`` in
    input order. The pool starts with the first batch: a run with nothing to cut (an
    unchanged store) starts no thread."""
    if workers == 1:
        for batch in batches(files, *sizes):
            consume(batch, job(batch))
        return
    listed = batches(files, *sizes)
    first = next(listed, None)
    if first is None:
        return
    executor: ThreadPool | ProcessPoolExecutor = (
        _process_pool(job, workers) if pool == "process" else ThreadPool(job, workers)
    )
    pending: deque[tuple[list[File], Any]] = deque()
    try:
        for batch in itertools.chain((first,), listed):
            if isinstance(executor, ThreadPool):
                future: Any = executor.submit(batch)
            else:
                future = executor.submit(_process_batch_in_process, batch)
            pending.append((batch, future))
            if len(pending) >= 2 * workers:
                done, future = pending.popleft()
                consume(done, future.result())
        while pending:
            done, future = pending.popleft()
            consume(done, future.result())
    finally:
        for _, future in pending:
            future.cancel()
        executor.shutdown(wait=True, cancel_futures=True)


class Task:
    """A batch handed to a :class:`ThreadPool`, and what became of it."""

    __slots__ = ("batch", "cancelled", "done", "error", "value")

    def __init__(self, batch: Sequence[File]) -> None:
        self.batch = batch
        self.done = threading.Event()
        self.value: BatchResult | None = None
        self.error: BaseException | None = None
        self.cancelled = False

    def result(self) -> BatchResult:
        """The batch's result once a worker made it (its exception, raised here)."""
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.value is not None
        return self.value

    def cancel(self) -> None:
        """Skip the batch if no worker has started it."""
        self.cancelled = True


class ThreadPool:
    """``workers`` threads running ``job`` on the batches submitted, oldest first.

    Written here rather than taken from ``concurrent.futures``: importing its executors
    (``logging`` and ``traceback`` with them, ``multiprocessing`` for the process one) cost
    8-23 ms of a run's 40-60 ms startup, and a worker needs no more than a queue and an
    event per batch.
    """

    def __init__(self, job: BatchJob, workers: int) -> None:
        self._job = job
        self._tasks: deque[Task | None] = deque()
        self._queued = threading.Semaphore(0)
        self._threads = [
            threading.Thread(target=self._work, name=f"spanchunk_{number}", daemon=True)
            for number in range(workers)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, batch: Sequence[File]) -> Task:
        """Queue ``batch`` for the next free worker."""
        task = Task(batch)
        self._tasks.append(task)
        self._queued.release()
        return task

    def _work(self) -> None:
        while True:
            self._queued.acquire()
            task = self._tasks.popleft()
            if task is None:
                return
            if not task.cancelled:
                try:
                    task.value = self._job(task.batch)
                except BaseException as error:
                    task.error = error
            task.done.set()

    def shutdown(self, *, wait: bool = True, cancel_futures: bool = False) -> None:
        """Stop every worker once the batches queued before are done (or skipped, for
        cancelled ones); with ``wait``, return when they have stopped."""
        del cancel_futures  # a cancelled task is skipped by the worker that takes it
        for _ in self._threads:
            self._tasks.append(None)
            self._queued.release()
        if wait:
            for thread in self._threads:
                thread.join()


def _process_pool(job: BatchJob, workers: int) -> ProcessPoolExecutor:
    import multiprocessing  # noqa: PLC0415
    from concurrent.futures import ProcessPoolExecutor  # noqa: PLC0415

    # spawn, not fork: forking a process that already runs threads can deadlock (and Python
    # 3.12 warns about it).
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_process,
        initargs=(job,),
    )
