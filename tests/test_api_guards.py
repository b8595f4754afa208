"""Ordinary mistakes are refused with errors that name the fix, and the query side is safe.

- Chunkers refuse an open file, a path, bytes, and LangChain, LlamaIndex and Haystack
  documents (real ones), alone or inside a list (the position named), naming what to call.
- ``ChunkStore`` refuses a path or an object that is not a store when it is constructed.
- ``SqliteRegistry.open`` opens an existing store only and never creates a file.
- ``expand`` (every form), ``auto_merge`` and ``assemble``: a hit whose parent the store does
  not hold warns by default, raises with ``missing="raise"``, and is kept silently with
  ``missing="keep"``.
"""

from __future__ import annotations

import asyncio
import doctest
import importlib
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from haystack import Document as HaystackDocument
from langchain_core.documents import Document as LangChainDocument
from llama_index.core.schema import Document as LlamaDocument
from llama_index.core.schema import TextNode
from spanchunk import (
    Chunk,
    Document,
    HierarchicalChunker,
    MissingParentError,
    MissingParentWarning,
    ParentChildChunker,
    ParentRegistry,
    RecursiveChunker,
    SqliteRegistry,
)
from spanchunk.integrations.langchain import ChunkStore
from spanchunk.retrieval import assemble, attach_parent_content, auto_merge, expand

TEXT = "One sentence here, with a few words. " * 40


@pytest.fixture
def text_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("First line of the notes.\nSecond line of the notes.\n", encoding="utf-8")
    return path


@pytest.fixture
def open_file(text_file: Path) -> Iterator[Any]:
    with text_file.open(encoding="utf-8") as file:
        yield file


# ------------------------------------------------------------------------------ chunker inputs

# Every public method that takes documents or texts, as (name, call) pairs.
CALLS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("chunk", lambda chunker, value: chunker.chunk(value)),
    ("chunk_tree", lambda chunker, value: chunker.chunk_tree(value)),
    ("chunk_many", lambda chunker, value: chunker.chunk_many(value)),
    ("spans_many", lambda chunker, value: chunker.spans_many(value)),
    ("achunk", lambda chunker, value: asyncio.run(chunker.achunk(value))),
]
SINGLE_CALLS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    *CALLS,
    ("spans", lambda chunker, value: chunker.spans(value)),
    ("chunk_text", lambda chunker, value: chunker.chunk_text(value)),
]


def chunker() -> ParentChildChunker:
    return ParentChildChunker(parent_size=200, child_size=50)


@pytest.mark.parametrize(("name", "call"), SINGLE_CALLS, ids=[name for name, _ in SINGLE_CALLS])
def test_an_open_file_is_refused_not_read_line_by_line(
    name: str, call: Callable[[Any, Any], Any], open_file: Any
) -> None:
    with pytest.raises(TypeError, match=r"not an open file \(TextIOWrapper\)") as caught:
        call(chunker(), open_file)
    message = str(caught.value)
    assert f"{name}()" in message
    assert "file.read()" in message and "read_document(path)" in message
    assert "from spanchunk.ingest import read_document" in message
    assert open_file.tell() == 0  # nothing was read from the file


def test_a_binary_file_is_refused(text_file: Path) -> None:
    with text_file.open("rb") as file, pytest.raises(TypeError, match=r"open file \(Buffered"):
        chunker().chunk(file)


@pytest.mark.parametrize(("name", "call"), SINGLE_CALLS, ids=[name for name, _ in SINGLE_CALLS])
def test_a_path_is_refused(name: str, call: Callable[[Any, Any], Any], text_file: Path) -> None:
    with pytest.raises(TypeError, match=r"not a path \(\w*Path\).*read_document\(path\)"):
        call(chunker(), text_file)


@pytest.mark.parametrize(("name", "call"), SINGLE_CALLS, ids=[name for name, _ in SINGLE_CALLS])
@pytest.mark.parametrize("data", [b"some bytes", bytearray(b"some bytes")])
def test_bytes_are_refused(name: str, call: Callable[[Any, Any], Any], data: Any) -> None:
    with pytest.raises(TypeError, match=r"decode it first.*\.decode\('utf-8'\).*read_document"):
        call(chunker(), data)


def foreign_documents() -> list[tuple[Any, str, str]]:
    """Real documents of the three frameworks: (document, what it is called, the fix)."""
    return [
        (
            LangChainDocument(page_content=TEXT),
            "a LangChain Document",
            r"SpanchunkTextSplitter\(\.\.\.\)\.split_documents\(documents\).*tree_documents"
            r".*spanchunk\.integrations\.langchain.*document\.page_content",
        ),
        (
            LlamaDocument(text=TEXT),
            "a LlamaIndex Document",
            r"SpanchunkNodeParser\(\.\.\.\)\.get_nodes_from_documents\(documents\).*"
            r"spanchunk\.integrations\.llamaindex",
        ),
        (
            TextNode(text=TEXT),
            "a LlamaIndex TextNode",
            r"SpanchunkNodeParser",
        ),
        (
            HaystackDocument(content=TEXT),
            "a Haystack Document",
            r"SpanchunkDocumentSplitter\(\.\.\.\)\.run\(documents\).*"
            r"spanchunk\.integrations\.haystack.*document\.content",
        ),
    ]


@pytest.mark.parametrize(("name", "call"), SINGLE_CALLS, ids=[name for name, _ in SINGLE_CALLS])
@pytest.mark.parametrize(
    ("document", "kind", "fix"), foreign_documents(), ids=["langchain", "llama", "node", "haystack"]
)
def test_another_frameworks_document_is_refused(
    name: str, call: Callable[[Any, Any], Any], document: Any, kind: str, fix: str
) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\) takes .*not {kind}: .*{fix}"):
        call(chunker(), document)


def list_items(text_file: Path, open_file: Any) -> list[tuple[Any, str]]:
    return [
        (open_file, r"an open file \(TextIOWrapper\)"),
        (text_file, r"a path \(\w*Path\)"),
        (b"bytes", "bytes: decode it first"),
        (LangChainDocument(page_content="x"), "a LangChain Document"),
        (LlamaDocument(text="x"), "a LlamaIndex Document"),
        (HaystackDocument(content="x"), "a Haystack Document"),
    ]


@pytest.mark.parametrize(("name", "call"), CALLS, ids=[name for name, _ in CALLS])
def test_an_item_of_a_list_is_refused_by_position(
    name: str, call: Callable[[Any, Any], Any], text_file: Path, open_file: Any
) -> None:
    argument = "texts" if name == "spans_many" else "documents"
    for bad, kind in list_items(text_file, open_file):
        with pytest.raises(TypeError, match=rf"{name}\(\): {argument}\[2\] must be .*not {kind}"):
            call(chunker(), ["a fine text", Document("another fine text"), bad])


def test_generators_and_documents_still_work(text_file: Path) -> None:
    from spanchunk.ingest import read_document  # noqa: PLC0415  (the fix the messages name)

    with text_file.open(encoding="utf-8") as file:
        by_text = chunker().chunk(file.read())
    assert [c.text for c in chunker().chunk(read_document(text_file))] == [c.text for c in by_text]
    assert chunker().chunk(text for text in [TEXT, TEXT]) == chunker().chunk([TEXT, TEXT])
    assert RecursiveChunker(50).chunk((TEXT,)) == RecursiveChunker(50).chunk(TEXT)


def test_document_refuses_a_file_naming_read_document(open_file: Any) -> None:
    with pytest.raises(TypeError, match=r"not an open file.*read_document\(path\), which gives"):
        Document(open_file)


def test_chunk_many_skip_reports_a_file_and_chunks_the_rest(open_file: Any) -> None:
    with pytest.warns(UserWarning, match=r"skipped document 1 \(TypeError\).*open file"):
        chunks = chunker().chunk_many(["A fine text.", open_file], errors="skip")
    assert [chunk.text for chunk in chunks] == ["A fine text."]


# ------------------------------------------------------------------------------ ChunkStore


@pytest.mark.parametrize("path", ["x.sqlite", Path("x.sqlite")], ids=["str", "Path"])
def test_chunk_store_refuses_a_path_when_constructed(
    path: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TypeError, match=r"not a path.*ChunkStore\(SqliteRegistry\.open\(path\)\)"):
        ChunkStore(path)
    assert not (tmp_path / "x.sqlite").exists()


@pytest.mark.parametrize("store", [None, 42, {"a": 1}, object()], ids=repr)
def test_chunk_store_refuses_what_is_not_a_store(store: Any) -> None:
    with pytest.raises(TypeError, match=r"get\(\) and add\(\).*has no (get|add)"):
        ChunkStore(store)


def test_chunk_store_over_an_opened_store(tmp_path: Path) -> None:
    path = tmp_path / "parents.sqlite"
    with SqliteRegistry(path) as store:
        children = ParentChildChunker(200, 50, registry=store).chunk(TEXT)
    with SqliteRegistry.open(path) as store:
        found = ChunkStore(store).mget([children[0].parent_id])
    assert found[0] is not None and found[0].metadata["level"] == 1


# ------------------------------------------------------------------------------ SqliteRegistry.open


def test_open_a_missing_store_creates_nothing(tmp_path: Path) -> None:
    path = tmp_path / "parents.sqlite"
    with pytest.raises(FileNotFoundError, match=r"no spanchunk store at .*parents\.sqlite") as got:
        SqliteRegistry.open(path)
    assert "SqliteRegistry(path)" in str(got.value)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError, match="does not exist either"):
        SqliteRegistry.open(tmp_path / "no" / "such" / "parents.sqlite")
    assert list(tmp_path.iterdir()) == []


def test_open_suggests_a_close_name(tmp_path: Path) -> None:
    SqliteRegistry(tmp_path / "parents.sqlite").close()
    with pytest.raises(FileNotFoundError, match=r"did you mean .*parents\.sqlite\?"):
        SqliteRegistry.open(tmp_path / "parent.sqlite")
    assert not (tmp_path / "parent.sqlite").exists()


def test_open_a_folder_names_the_store_in_it(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError, match=r"is a folder.*SqliteRegistry\.open\("):
        SqliteRegistry.open(tmp_path)
    SqliteRegistry(tmp_path / "parents.sqlite").close()
    with pytest.raises(IsADirectoryError, match=r"not a spanchunk store \(it holds parents"):
        SqliteRegistry.open(tmp_path)
    with pytest.raises(TypeError, match="file path"):
        SqliteRegistry.open(42)  # type: ignore[arg-type]


def test_open_an_existing_store_expands(tmp_path: Path) -> None:
    path = tmp_path / "parents.sqlite"
    with SqliteRegistry(path) as store:
        chunker = ParentChildChunker(parent_size=200, child_size=50, registry=store)
        children = chunker.chunk(TEXT)
    with SqliteRegistry.open(path, timeout=5) as store:
        parents = store.expand(children[:3])
        assert parents and all(parent.level == 1 for parent in parents)
        assert parents[0].id == children[0].parent_id
        assert expand(children[:3], store) == parents
    # The constructor still creates a new store where there is none.
    with SqliteRegistry(tmp_path / "new.sqlite") as store:
        assert len(store) == 0
    assert (tmp_path / "new.sqlite").exists()


# ------------------------------------------------------------------------------ missing parents


@pytest.fixture
def orphans() -> tuple[list[Chunk], list[Chunk]]:
    """Leaves whose parents only their chunker's own registry holds, and three of them as
    hits: every other store is missing their parents."""
    leaves = ParentChildChunker(parent_size=200, child_size=50).chunk(TEXT)
    return leaves, leaves[:3]


KINDS = ["ParentRegistry", "SqliteRegistry"]


def other_store(kind: str, tmp_path: Path) -> Any:
    """A ParentRegistry, or a SqliteRegistry in a real file, filled with other parents."""
    store = ParentRegistry() if kind == "ParentRegistry" else SqliteRegistry(tmp_path / "o.sqlite")
    ParentChildChunker(parent_size=300, child_size=60, registry=store).chunk("Other text. " * 80)
    return store


@pytest.mark.parametrize("kind", KINDS)
def test_expand_missing_modes(
    kind: str, tmp_path: Path, orphans: tuple[list[Chunk], list[Chunk]]
) -> None:
    _, hits = orphans
    store = other_store(kind, tmp_path)
    try:
        # warn (the default): once per call, naming how many, one parent id, cause and fix.
        with pytest.warns(MissingParentWarning) as caught:
            kept = store.expand(hits)
        assert kept == hits  # each hit kept as itself
        assert len(caught) == 1
        message = str(caught[0].message)
        assert f"{kind}.expand: 3 of 3 hits have a parent this store does not hold" in message
        assert repr(hits[0].parent_id) in message
        assert "cut with other settings or another store, or the document was deleted" in message
        assert "missing='keep'" in message and "missing='raise'" in message
        assert caught[0].filename == __file__  # the caller's line, not spanchunk's
        # raise: a KeyError subclass with the same explanation.
        with pytest.raises(MissingParentError, match=r"3 of 3 hits.*does not hold") as error:
            store.expand(hits, missing="raise")
        assert isinstance(error.value, KeyError)
        assert error.value.parent_id == hits[0].parent_id and error.value.count == 3
        # keep: the hits, silently.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert store.expand(hits, missing="keep") == kept
            assert store.expand([(hit, 0.5) for hit in hits], missing="keep") == [
                (hit, 0.5) for hit in kept
            ]
        with pytest.raises(ValueError, match=r"missing must be 'warn'.*'raise'.*'keep'"):
            store.expand(hits, missing="ignore")
    finally:
        if isinstance(store, SqliteRegistry):
            store.close()


def test_expand_counts_only_the_missing_hits(orphans: tuple[list[Chunk], list[Chunk]]) -> None:
    leaves, _ = orphans
    chunker = ParentChildChunker(parent_size=200, child_size=50)
    own = chunker.chunk("Another text of its own. " * 30)
    stranger = leaves[0]
    with pytest.warns(MissingParentWarning, match=r"1 of 3 hits has a parent"):
        expanded = chunker.expand([own[0], stranger, own[1]])
    assert expanded[1] is stranger and expanded[0].level == 1
    # max_parents does not hide a missing hit past the limit.
    with pytest.raises(MissingParentError):
        chunker.expand([own[0], stranger], max_parents=1, missing="raise")


def test_chunker_expand_modes(orphans: tuple[list[Chunk], list[Chunk]]) -> None:
    _, hits = orphans
    other = HierarchicalChunker(sizes=[300, 60])
    other.chunk("Other text. " * 80)
    with pytest.warns(MissingParentWarning, match=r"ParentRegistry\.expand: 3 of 3"):
        assert other.expand(hits) == [hits[0], hits[1], hits[2]]
    with pytest.raises(MissingParentError):
        other.expand(hits, missing="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert other.expand(hits, missing="keep") == hits


def test_what_is_not_missing() -> None:
    chunker = ParentChildChunker(parent_size=200, child_size=50)
    leaves = chunker.chunk(TEXT)
    carrying = attach_parent_content(leaves, chunker.parents)
    tops = RecursiveChunker(50).chunk(TEXT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # A hit that carries its parent, with any store or none: the carried parent.
        assert expand(carrying[:2], ParentRegistry(), missing="raise") == [
            chunker.parents[leaves[0].parent_id]
        ]
        assert expand(carrying[:2], None, missing="raise")[0].level == 1
        # A top-level hit: itself, never missing.
        assert expand(tops[:2], ParentRegistry(), missing="raise") == tops[:2]
        assert ParentRegistry().expand(tops[:2], missing="raise") == tops[:2]


def test_retrieval_expand_without_a_store(orphans: tuple[list[Chunk], list[Chunk]]) -> None:
    _, hits = orphans
    with pytest.warns(MissingParentWarning, match=r"no store was given.*parent_content=True"):
        assert expand(hits, None) == hits
    with pytest.raises(MissingParentError, match="no store was given"):
        expand(hits, None, missing="raise")
    assert expand(hits, None, missing="keep") == hits


@pytest.mark.parametrize("kind", KINDS)
def test_auto_merge_and_assemble_missing_modes(
    kind: str, tmp_path: Path, orphans: tuple[list[Chunk], list[Chunk]]
) -> None:
    _, hits = orphans
    store = other_store(kind, tmp_path)
    try:
        with pytest.warns(MissingParentWarning, match=r"auto_merge: 3 of 3 hits.*unmerged"):
            assert auto_merge(hits, store) == hits
        with pytest.raises(MissingParentError):
            auto_merge(hits, store, missing="raise")
        with pytest.warns(MissingParentWarning, match=r"assemble: 3 of 3 hits have an anc"):
            spans = assemble(hits, store, budget=1000, unit="char")
        assert [span.chunk_ids for span in spans] == [(hit.id,) for hit in hits]
        with pytest.raises(MissingParentError, match="assemble"):
            assemble(hits, store, budget=1000, unit="char", missing="raise")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert auto_merge(hits, store, missing="keep") == hits
            assert assemble(hits, store, budget=1000, unit="char", missing="keep") == spans
    finally:
        if isinstance(store, SqliteRegistry):
            store.close()


def test_auto_merge_and_assemble_with_the_right_store_do_not_warn() -> None:
    store = ParentRegistry()
    leaves = HierarchicalChunker(sizes=[200, 50], registry=store).chunk(TEXT)
    store.add(leaves)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert auto_merge(leaves[:3], store, missing="raise")
        assert assemble(leaves[:3], store, budget=500, unit="char", missing="raise")


@pytest.mark.parametrize(
    "module",
    [
        "spanchunk.errors",
        "spanchunk.document",
        "spanchunk.retrieval.context",
        "spanchunk.chunkers.code",
    ],
)
def test_docstring_examples(module: str) -> None:
    failures, tried = doctest.testmod(importlib.import_module(module))
    assert tried and not failures
