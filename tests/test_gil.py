"""The Rust core releases the GIL: another Python thread runs while a big text is chunked.

No timing threshold: the test only asks that the other thread made progress while the main
thread was inside ``spans()``.
"""

from __future__ import annotations

import threading

import numpy as np
from spanchunk import ParentChildChunker, RecursiveChunker


def _big_text(megabytes: int = 50) -> str:
    paragraph = (
        "Small chunks are searched; their parents are read. Ünïcödé text, 漢字かな交じり文。"
        " The quick brown fox jumps over the lazy dog! \U0001f44d\n\n"
    )
    return paragraph * (megabytes * 1_000_000 // len(paragraph.encode()))


def _progress_during(call: object) -> tuple[int, object]:
    state = {"count": 0, "stop": False}
    started = threading.Event()

    def spin() -> None:
        started.set()
        while not state["stop"]:
            state["count"] += 1

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    started.wait()
    try:
        before = state["count"]
        result = call()  # type: ignore[operator]
        after = state["count"]
    finally:
        state["stop"] = True
        thread.join()
    return after - before, result


def test_spans_releases_the_gil() -> None:
    text = _big_text()
    assert len(text.encode()) > 49_000_000
    chunker = RecursiveChunker(chunk_size=2000, overlap=0)
    progress, spans = _progress_during(lambda: chunker.spans(text))
    assert isinstance(spans, np.ndarray) and len(spans) > 10_000
    assert progress > 100, f"the other thread advanced only {progress} steps during spans()"


def test_parent_child_spans_release_the_gil() -> None:
    text = _big_text(20)
    chunker = ParentChildChunker(parent_size=2000, child_size=400, child_overlap=0)
    progress, spans = _progress_during(lambda: chunker.spans(text))
    assert len(spans) > 30_000
    assert progress > 100, f"the other thread advanced only {progress} steps during spans()"
