"""Shared fixtures: the real corpus (DESIGN.md, shared/corpus/README.md), and the store's
stat cache observed (the files a run reads; every file's state trusted).

The contract checker lives in ``_contract.py`` and the hypothesis strategies in
``_strategies.py``, next to this file, so test modules import them by name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import spanchunk.cli._store as cli_store

REPO_ROOT = Path(__file__).resolve().parent.parent


def corpus_absent(message: str) -> None:
    """Skip a test whose shared input (the corpus, its tokenizer) is absent, saying what to
    set; where ``SPANCHUNK_REQUIRE_CORPUS`` is set (CI sets it), fail instead: there the
    corpus tests must run."""
    if os.environ.get("SPANCHUNK_REQUIRE_CORPUS"):
        pytest.fail(f"{message} (SPANCHUNK_REQUIRE_CORPUS is set: the corpus tests must run)")
    pytest.skip(message)


def corpus_root() -> Path:
    """``$SPANCHUNK_CORPUS``, default ``../shared/corpus`` from the repository root."""
    configured = os.environ.get("SPANCHUNK_CORPUS")
    path = Path(configured) if configured else Path("..") / "shared" / "corpus"
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path.resolve()


def read_document(path: Path) -> str:
    # newline="" keeps CRLF as it is and utf-8 (not utf-8-sig) keeps the BOM: both are part
    # of what the offsets must get right.
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


@pytest.fixture(scope="session")
def corpus() -> dict[str, list[tuple[str, str]]]:
    """Every file of every folder of the corpus: {folder: [(file name, text), ...]}."""
    root = corpus_root()
    if not root.is_dir():
        corpus_absent(
            f"corpus folder {root} is absent: set SPANCHUNK_CORPUS to the shared corpus "
            "(CI always has it)"
        )
    folders: dict[str, list[tuple[str, str]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        folders[folder.name] = [(str(p.relative_to(root)), read_document(p)) for p in files]
    assert folders, f"corpus folder {root} has no sub-folders"
    assert all(folders.values()), f"an empty folder in {root}"
    return folders


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust the state of files however recently they changed (the tests' files are seconds
    old; the racy rule has its own test)."""
    monkeypatch.setattr(cli_store, "RACY_SECONDS", -60)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files each run reads, in order."""
    paths: list[str] = []
    real_read = cli_store.read_source

    def counted(file: Any, *args: Any) -> Any:
        paths.append(os.path.basename(file.path))
        return real_read(file, *args)

    monkeypatch.setattr(cli_store, "read_source", counted)
    return paths
