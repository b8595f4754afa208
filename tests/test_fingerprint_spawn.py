"""A chunker with a length_function has the same fingerprint (so the same chunk ids) in a spawn
worker as in the process that made it, where the function's module is ``__main__``."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import multiprocessing
    from spanchunk import RecursiveChunker

    def words(text):
        return len(text.split())

    def ids(_):
        chunker = RecursiveChunker(3, unit="token", length_function=words)
        return chunker.fingerprint(), [c.id for c in chunker.chunk_text("a b c d e f g")]

    if __name__ == "__main__":
        here = ids(None)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            there = pool.map(ids, [None])[0]
        print(here == there, here[0], there[0])
    """
)


def test_length_function_fingerprint_is_the_same_in_a_spawn_worker(tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    same, here, there = result.stdout.split()
    assert same == "True", (here, there)
