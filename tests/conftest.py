"""Shared fixtures: the real corpus (``tests/corpus/README.md`` says what it holds and where
each file comes from; ``docs/development.md`` how to run on the whole shared corpus), and the
store's stat cache observed (the files a run reads; every file's state trusted).

The contract checker lives in ``_contract.py`` and the hypothesis strategies in
``_strategies.py``, next to this file, so test modules import them by name.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any, NoReturn

import pytest
import spanchunk.ingest.statcache as cli_store

REPO_ROOT = Path(__file__).resolve().parent.parent
# A few files of each folder of the shared corpus (leading parts of the books), with their
# licences: every clone has them, so the tests that read real text always run.
VENDORED_CORPUS = REPO_ROOT / "tests" / "corpus" / "texts"
# The embedding model's tokenizer, beside the texts as the shared one is beside the shared
# corpus (``tokenizers/``); the same file.
TOKENIZER = VENDORED_CORPUS.parent / "tokenizers" / "all-MiniLM-L6-v2" / "tokenizer.json"


def corpus_root() -> Path:
    """``$SPANCHUNK_CORPUS`` (relative: from the repository root), else ``tests/corpus/texts``.

    Set it to the whole shared corpus (``../shared/corpus``, as CI does) to run the corpus
    tests on all of it."""
    configured = os.environ.get("SPANCHUNK_CORPUS")
    if not configured:
        return VENDORED_CORPUS
    path = Path(configured)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path.resolve()


def corpus_missing(what: str) -> NoReturn:
    """Fail a test whose corpus input is missing. The vendored corpus has every file the tests
    name, so only a ``SPANCHUNK_CORPUS`` that names another folder can lack one: a mistake,
    never a reason to skip."""
    pytest.fail(
        f"{what} is absent: SPANCHUNK_CORPUS={os.environ.get('SPANCHUNK_CORPUS', '')!r} must "
        "name the shared corpus (unset, the tests read tests/corpus/texts)"
    )


def corpus_file(folder: str, name: str) -> Path:
    """One file of the corpus, by folder and name."""
    path = corpus_root() / folder / name
    if not path.is_file():
        corpus_missing(f"corpus file {path}")
    return path


def read_document(path: Path) -> str:
    # newline="" keeps CRLF as it is and utf-8 (not utf-8-sig) keeps the BOM: both are part
    # of what the offsets must get right.
    with path.open(encoding="utf-8", newline="") as handle:
        return handle.read()


@functools.cache
def load_corpus(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Every file of every folder of the corpus at ``root``: {folder: [(file name, text)]}.
    Read once per run: the tests must not change it."""
    if not root.is_dir():
        corpus_missing(f"corpus folder {root}")
    folders: dict[str, list[tuple[str, str]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        files = sorted(p for p in folder.rglob("*") if p.is_file())
        folders[folder.name] = [(str(p.relative_to(root)), read_document(p)) for p in files]
    assert folders, f"corpus folder {root} has no sub-folders"
    assert all(folders.values()), f"an empty folder in {root}"
    return folders


@pytest.fixture(scope="session")
def corpus() -> dict[str, list[tuple[str, str]]]:
    """Every file of every folder of the corpus (``corpus_root``)."""
    return load_corpus(corpus_root())


@pytest.fixture(scope="session")
def vendored_corpus() -> dict[str, list[tuple[str, str]]]:
    """Every file of every folder of ``tests/corpus/texts``, whatever ``SPANCHUNK_CORPUS`` says."""
    return load_corpus(VENDORED_CORPUS)


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
