"""The pool of a run: batches of files cut on worker threads (or processes), their results
handed back in input order.

Speed: ``benches/NOTES.md``, under ``python/spanchunk/ingest/pool.py``.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from spanchunk.ingest.files import File
    from spanchunk.ingest.jobs import BatchJob, BatchResult

__all__ = ["batches", "default_workers", "run_batches"]

BATCH_BYTES = 1 << 20
BATCH_FILES = 256


def default_workers() -> int:
    """The workers of a run by default: the CPUs this process may run on."""
    import os  # noqa: PLC0415

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


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
