"""The Rust core releases the GIL: another Python thread runs while a big text is chunked.

No timing threshold: the tests count how many steps a second thread made while the main
thread was inside the call. Two details make the count mean something:

- the interpreter's switch interval is raised to 5 s for the measurement, so the
  interpreter itself does not hand the GIL to the other thread during a call of well under
  a second: the other thread can only run if the call releases the GIL;
- the other thread releases the GIL at every step (``os.sched_yield`` does), so the main
  thread gets it back as soon as the call returns, and a brief release costs one step only.

A control measurement around a call that holds the GIL (``str.encode``) proves the method:
there the other thread makes (almost) no progress. On a loaded machine a released GIL helps
the other thread only when the OS gives it a core, so the released-GIL tests try a few
times and ask for more than 10 steps (an idle machine sees tens of thousands).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from spanchunk import ParentChildChunker, RecursiveChunker

_yield_gil: Callable[[], Any] = getattr(os, "sched_yield", None) or (lambda: time.sleep(0))


def _big_text(megabytes: int = 50) -> str:
    paragraph = (
        "Small chunks are searched; their parents are read. Ünïcödé text, 漢字かな交じり文。"
        " The quick brown fox jumps over the lazy dog! \U0001f44d\n\n"
    )
    return paragraph * (megabytes * 1_000_000 // len(paragraph.encode()))


def _progress_during(call: Callable[[], Any]) -> tuple[int, Any]:
    """Steps another Python thread made while ``call()`` ran in this thread."""
    state = {"count": 0, "stop": False}
    started = threading.Event()

    def spin() -> None:
        started.set()
        while not state["stop"]:
            state["count"] += 1
            _yield_gil()

    interval = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    thread = threading.Thread(target=spin, daemon=True)
    try:
        thread.start()
        started.wait()
        before = state["count"]
        result = call()
        after = state["count"]
    finally:
        state["stop"] = True
        thread.join()
        sys.setswitchinterval(interval)
    return after - before, result


def _best_progress(call: Callable[[], Any], attempts: int = 10) -> tuple[int, Any]:
    """The most steps the other thread made over a few calls.

    A released GIL lets the other thread run only when the OS gives it a core: on a loaded
    machine one call can see few steps, so the call is tried again; a call that holds the GIL
    sees no steps however often it is tried (the control test). Each attempt makes the call
    three times, so that it lasts long enough to see several of the OS's time slices.
    """
    best, result = -1, None
    for _ in range(attempts):
        progress, result = _progress_during(lambda: [call() for _ in range(3)][-1])
        best = max(best, progress)
        if best > 10:
            break
    return best, result


def test_the_measurement_sees_a_call_that_holds_the_gil() -> None:
    text = _big_text()
    progress, encoded = _progress_during(lambda: text.encode("utf-16"))
    assert len(encoded) > len(text)
    assert progress <= 5, f"the control let the other thread run {progress} steps"


def test_spans_releases_the_gil() -> None:
    text = _big_text()
    assert len(text.encode()) > 49_000_000
    chunker = RecursiveChunker(chunk_size=2000, overlap=0)
    progress, spans = _best_progress(lambda: chunker.spans(text))
    assert isinstance(spans, np.ndarray) and len(spans) > 10_000
    assert progress > 10, f"the other thread advanced only {progress} steps during spans()"


def test_parent_child_spans_release_the_gil() -> None:
    text = _big_text()
    chunker = ParentChildChunker(parent_size=2000, child_size=400, child_overlap=0)
    progress, spans = _best_progress(lambda: chunker.spans(text))
    assert len(spans) > 100_000
    assert progress > 10, f"the other thread advanced only {progress} steps during spans()"


def test_spans_many_releases_the_gil() -> None:
    texts = [_big_text(10)] * 4
    chunker = ParentChildChunker(parent_size=2000, child_size=400, child_overlap=0)
    progress, many = _best_progress(lambda: chunker.spans_many(texts, workers=2))
    assert len(many) == 4
    assert progress > 10, f"the other thread advanced only {progress} steps in spans_many()"
