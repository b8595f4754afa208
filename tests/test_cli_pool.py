"""The job's worker pool (``spanchunk.ingest.pool``): batches come back in input order, a
worker's exception reaches the consumer, and a stopped run leaves no thread behind."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import pytest
from spanchunk.ingest.files import File
from spanchunk.ingest.jobs import BatchResult
from spanchunk.ingest.pool import ThreadPool, run_batches


def many_files(count: int) -> list[File]:
    # One file a batch (each as large as a batch may be).
    return [File(f"f{number:03d}", 1 << 20) for number in range(count)]


class Recording:
    """A job that records which thread ran which batch, slower for some batches so that
    workers finish out of order."""

    def __init__(self, fail_at: str | None = None) -> None:
        self.fail_at = fail_at
        self.seen: list[str] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        name = batch[0].path
        if int(name[1:]) % 3 == 0:
            time.sleep(0.01)
        with self.lock:
            self.seen.append(name)
            self.threads.add(threading.current_thread().name)
        if name == self.fail_at:
            raise OSError(f"cannot read {name}")
        result = BatchResult()
        result.documents = int(name[1:])
        return result


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_batches_come_back_in_input_order(workers: int) -> None:
    job = Recording()
    consumed: list[int] = []
    run_batches(many_files(40), job, workers, "thread", lambda _, r: consumed.append(r.documents))
    assert consumed == list(range(40))
    assert sorted(job.seen) == [f"f{n:03d}" for n in range(40)]
    if workers > 1:
        assert len(job.threads) == workers
        assert threading.main_thread().name not in job.threads


def test_a_worker_error_reaches_the_consumer_and_stops_the_run() -> None:
    job = Recording(fail_at="f010")
    consumed: list[int] = []
    before = threading.active_count()
    with pytest.raises(OSError, match="cannot read f010"):
        run_batches(many_files(200), job, 2, "thread", lambda _, r: consumed.append(r.documents))
    # Everything before the failed batch was consumed, in order; at most the batches in
    # flight (2 per worker) were cut after it; no worker thread is left running.
    assert consumed == list(range(10))
    assert len(job.seen) <= 10 + 1 + 2 * 2
    assert threading.active_count() == before


def test_a_consumer_error_cancels_what_was_queued() -> None:
    job = Recording()

    def consume(_: Sequence[File], result: BatchResult) -> None:
        if result.documents == 5:
            raise KeyboardInterrupt

    before = threading.active_count()
    with pytest.raises(KeyboardInterrupt):
        run_batches(many_files(200), job, 2, "thread", consume)
    assert len(job.seen) <= 6 + 2 * 2
    assert threading.active_count() == before


def test_pool_runs_and_stops() -> None:
    pool = ThreadPool(lambda batch: BatchResult(), 2)
    tasks = [pool.submit([File("x", 1)]) for _ in range(5)]
    tasks[-1].cancel()
    assert all(isinstance(task.result(), BatchResult) for task in tasks[:-1])
    pool.shutdown(wait=True)
    assert tasks[-1].done.is_set()
