"""A panic in the Rust core is a bug, but it must reach Python as an exception with its
message, never abort the interpreter (Cargo.toml keeps ``panic = "unwind"``: docs/design.md).
The core has a hidden test-only hook, ``spanchunk._core._panic_for_tests``, that panics on
purpose: on the calling thread, or on one of the engine's worker-pool threads."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spanchunk
from spanchunk import ParentChildChunker, _core

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("workers", [0, 1, 2])
def test_a_panic_is_a_runtime_error_with_its_message(workers: int) -> None:
    with pytest.raises(RuntimeError, match=r"core panicked .*: the core's test panic"):
        _core._panic_for_tests("the core's test panic", workers)


def test_the_core_works_after_a_panic() -> None:
    # A panic on a pool thread leaves the pool (and its lock) usable for the next call.
    with pytest.raises(RuntimeError):
        _core._panic_for_tests("first", 2)
    chunker = ParentChildChunker(200, 50)
    texts = ["one two three. " * 40, "four five six. " * 30]
    assert [len(spans) for spans in chunker.spans_many(texts, workers=2)] == [
        len(chunker.spans(text)) for text in texts
    ]


def test_a_panic_does_not_kill_the_process() -> None:
    # In a child process: an abort would end it with a signal, not with this output.
    code = (
        "from spanchunk import _core\n"
        "try:\n"
        "    _core._panic_for_tests('boom', 2)\n"
        "except Exception as error:\n"
        "    print(type(error).__name__, error)\n"
        "print('still alive')\n"
    )
    package_parent = str(Path(spanchunk.__file__).resolve().parent.parent)
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": package_parent},
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "RuntimeError" in result.stdout
    assert "boom" in result.stdout
    assert result.stdout.rstrip().endswith("still alive")


def test_release_profile_unwinds() -> None:
    # `panic = "abort"` in a profile would turn every caught panic above into an abort.
    cargo = (ROOT / "Cargo.toml").read_text(encoding="utf-8")
    assert "[profile.release]" in cargo
    assert not re.search(r"^\s*panic\s*=\s*\"abort\"", cargo, re.MULTILINE)
