"""Parent stores: SqliteRegistry and ParentRegistry through the ParentStore protocol.

The same behaviour is asked of both registries (round trips, lifecycle, fingerprints, bad
input); the SQLite one is also driven from real processes: persistence across processes and
restarts, two writers and a reader at once, and a writer killed with SIGKILL mid-upsert.
"""

from __future__ import annotations

import doctest
import importlib
import json
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
import spanchunk
from _contract import chunk_record
from spanchunk import (
    Chunk,
    Document,
    HierarchicalChunker,
    ParentChildChunker,
    ParentRegistry,
    ParentStore,
    SqliteRegistry,
)
from spanchunk.stores import StoreFormatError
from spanchunk.stores.schema import SCHEMA_VERSION

# Child processes import spanchunk from where this process did (an install or a source tree).
PYTHON_DIR = Path(spanchunk.__file__).resolve().parent.parent

TEXT_A = "\n\n".join(f"Alpha paragraph {i}. " + "words in alpha " * 9 for i in range(8))
TEXT_B = "\n\n".join(f"Beta paragraph {i}. " + "words in beta " * 7 for i in range(5))
MARKDOWN = "# Title\n\nIntro text here.\n\n## Part (one)\n\n" + "Body of part one. " * 20


def record(chunk: Chunk) -> tuple[Any, ...]:
    """Every field, with the types of metadata values (a tuple must come back a tuple)."""
    fields = chunk_record(chunk)
    types = {key: type(value).__name__ for key, value in chunk.metadata.items()}
    return (*fields, types)


def make_tree(text: str = TEXT_A, document_id: str | None = "doc-a", **metadata: Any) -> list:
    chunker = ParentChildChunker(parent_size=160, child_size=50)
    return chunker.chunk_tree(Document(text, id=document_id, metadata=metadata or None))


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield ParentRegistry(children=True)
    else:
        with SqliteRegistry(tmp_path / "store.sqlite", children=True) as opened:
            yield opened


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "parents.sqlite"


# ------------------------------------------------------------------------------ protocol


def test_both_registries_satisfy_the_protocol(path: Path) -> None:
    # The annotations are the static half: a type checker run over the tests checks that
    # both classes match every member of the protocol, signatures included.
    memory: ParentStore = ParentRegistry()
    with SqliteRegistry(path) as sqlite_store:
        on_disk: ParentStore = sqlite_store
        assert isinstance(on_disk, ParentStore)
    assert isinstance(memory, ParentStore)
    assert not isinstance({}, ParentStore)


def test_round_trip_every_field(store: Any) -> None:
    tree = make_tree(source="a.txt", tags=["x", "y"], nested={"t": (1, 2.5, None)}, flag=True)
    tree += ParentChildChunker(200, 60, parent_chunker="markdown").chunk_tree(
        Document(MARKDOWN, id="doc-md", source="m.md")
    )
    store.add(tree)
    assert len(store) == len(tree)
    back = list(store)
    assert [record(c) for c in back] == [record(c) for c in tree]
    assert back == tree
    for chunk in tree:
        assert store.get(chunk.id) == chunk and record(store[chunk.id]) == record(chunk)
        assert chunk in store and chunk.id in store
    headings = [c.metadata["headings"] for c in back if c.document_id == "doc-md"]
    assert headings and all(type(h) is tuple for h in headings)
    assert store.get("nope") is None and store.get("nope", 7) == 7 and "nope" not in store
    assert 42 not in store
    with pytest.raises(KeyError, match="nope"):
        store["nope"]
    assert store.get_many([tree[0].id, "nope", tree[1].id]) == {
        tree[0].id: tree[0],
        tree[1].id: tree[1],
    }


def test_add_replaces_in_place_and_keeps_order(store: Any) -> None:
    tree = make_tree()
    store.add(tree)
    store.add(tree[1])  # an existing id: replaced where it was
    assert [c.id for c in store] == [c.id for c in tree]


def test_parent_of_and_expand(store: Any) -> None:
    tree = make_tree()
    store.add(tree)
    leaves = [c for c in tree if c.level == 0]
    parents = {c.id: c for c in tree if c.level == 1}
    assert store.parent_of(leaves[0]) == parents[leaves[0].parent_id]
    assert store.parent_of(parents[leaves[0].parent_id]) is None
    expanded = store.expand(leaves)
    assert [c.id for c in expanded] == list(dict.fromkeys(c.parent_id for c in leaves))
    assert store.expand(leaves, max_parents=1) == [parents[leaves[0].parent_id]]
    pairs = store.expand([(leaves[1], 0.9), (leaves[0], 0.5)])
    assert pairs == [(parents[leaves[0].parent_id], 0.9)]


def test_window_gives_adjacent_chunks_in_order(store: Any) -> None:
    tree = make_tree()
    store.add(tree)
    leaves = [c for c in tree if c.level == 0]
    assert store.window("doc-a", 0, 2, 5) == leaves[2:6]
    assert store.window("doc-a", 0, len(leaves) - 1, len(leaves) + 10) == leaves[-1:]
    assert store.window("doc-a", 7, 0, 3) == [] and store.window("other", 0, 0, 3) == []


# ------------------------------------------------------------------------------ lifecycle


def test_upsert_replaces_one_document_and_skips_an_unchanged_one(store: Any) -> None:
    old = make_tree(TEXT_A)
    other = make_tree(TEXT_B, "doc-b")
    assert store.upsert("doc-a", old) is True
    assert store.upsert("doc-b", other) is True
    assert store.upsert("doc-a", make_tree(TEXT_A)) is False  # re-chunked, unchanged
    new = make_tree(TEXT_A.replace("Alpha paragraph 3", "Changed paragraph 3"))
    assert store.upsert("doc-a", new) is True
    assert sorted(c.id for c in store) == sorted(c.id for c in new + other)
    assert store.upsert("doc-a", []) is True
    assert sorted(c.id for c in store) == sorted(c.id for c in other)


def test_upsert_rewrites_after_add_touched_the_document(store: Any) -> None:
    tree = make_tree()
    store.upsert("doc-a", tree)
    store.delete_document("doc-a")
    store.add(tree[:1])
    assert store.upsert("doc-a", tree) is True
    assert len(store) == len(tree)


def test_upsert_refuses_chunks_of_another_document(store: Any) -> None:
    store.upsert("doc-a", make_tree())
    with pytest.raises(ValueError, match="belongs to document 'doc-b'"):
        store.upsert("doc-a", make_tree(TEXT_B, "doc-b"))
    assert len(store) == len(make_tree())


def test_delete_document_removes_every_level(store: Any) -> None:
    a, b = make_tree(), make_tree(TEXT_B, "doc-b")
    store.add(a + b)
    assert store.delete_document("doc-a") == len(a)
    assert [c.id for c in store] == [c.id for c in b]
    assert store.delete_document("doc-a") == 0


def test_fingerprint_recorded_and_other_settings_refused(store: Any) -> None:
    first = ParentChildChunker(160, 50)
    other = ParentChildChunker(300, 50)
    tree = first.chunk_tree(Document(TEXT_A, id="doc-a"))
    assert store.fingerprint is None
    store.add(tree, fingerprint=first.fingerprint())
    assert store.fingerprint == first.fingerprint()
    store.add(tree, fingerprint=first.fingerprint())
    with pytest.raises(ValueError) as refused:
        store.add(other.chunk_tree(TEXT_B), fingerprint=other.fingerprint())
    message = str(refused.value)
    assert first.fingerprint() in message and other.fingerprint() in message
    assert "new store" in message and "clear()" in message
    with pytest.raises(ValueError, match=other.fingerprint()):
        store.upsert("doc-a", tree, fingerprint=other.fingerprint())
    assert len(store) == len(tree)  # nothing of the refused chunks went in
    store.clear()
    assert len(store) == 0 and store.fingerprint is None
    store.add(other.chunk_tree(TEXT_B), fingerprint=other.fingerprint())
    assert store.fingerprint == other.fingerprint()


def test_content_hashes_are_kept_with_their_documents(path: Path) -> None:
    tree = make_tree()
    with SqliteRegistry(path, children=True) as store:
        assert store.upsert("doc-a", tree, content_hash="h1") is True
        assert store.upsert("doc-b", make_tree(TEXT_B, "doc-b")) is True
        assert store.content_hashes() == {"doc-a": "h1", "doc-b": None}
        assert store.upsert("doc-a", tree, content_hash="h1") is False  # nothing changed
        assert store.upsert("doc-a", tree, content_hash="h2") is True  # same chunks, new hash
        assert store.upsert("doc-a", tree) is False  # no hash given: the chunks decide
        assert store.content_hashes()["doc-a"] == "h2"
        # A source with no chunks (an empty file) stays known with its hash.
        assert store.upsert("doc-a", [], content_hash="empty") is True
        assert store.content_hashes() == {"doc-a": "empty", "doc-b": None}
        assert store.window("doc-a", 0, 0, 100) == []
        store.add(tree)  # chunks added by id: the recorded hash no longer says what is stored
        assert store.content_hashes()["doc-a"] is None
        assert store.delete_document("doc-a") == len(tree)
        assert "doc-a" not in store.content_hashes()
        with pytest.raises(TypeError, match="content_hash must be a str"):
            store.upsert("doc-a", tree, content_hash=b"bytes")  # type: ignore[arg-type]
    with SqliteRegistry(path) as reopened:
        assert reopened.content_hashes() == {"doc-b": None}


def test_keeps_children_flag(path: Path) -> None:
    assert ParentRegistry(children=True).keeps_children
    assert not ParentRegistry().keeps_children
    with SqliteRegistry(path) as plain:
        assert not plain.keeps_children
    with SqliteRegistry(path, children=True) as full:
        assert full.keeps_children


def test_a_chunker_fills_a_sqlite_store(path: Path) -> None:
    with SqliteRegistry(path) as store:
        chunker = HierarchicalChunker(sizes=[400, 120, 40], registry=store)
        leaves = chunker.chunk(TEXT_A)
        tree = chunker.chunk_tree(TEXT_A)
    with SqliteRegistry(path) as again:
        assert sorted(c.id for c in again) == sorted(c.id for c in tree if c.level > 0)
        parent_id = max(
            {leaf.parent_id for leaf in leaves},
            key=lambda parent: sum(leaf.parent_id == parent for leaf in leaves),
        )
        siblings = [leaf for leaf in leaves if leaf.parent_id == parent_id]
        assert len(siblings) >= 2
        assert [c.id for c in again.expand(siblings)] == [parent_id]


# ------------------------------------------------------------------------------ bad input


def test_missing_folder_missing_file_and_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist; create it"):
        SqliteRegistry(tmp_path / "no" / "such" / "store.sqlite")
    with pytest.raises(FileNotFoundError, match="create=True"):
        SqliteRegistry(tmp_path / "absent.sqlite", create=False)
    with pytest.raises(IsADirectoryError, match="folder"):
        SqliteRegistry(tmp_path)
    with pytest.raises(TypeError, match="file path"):
        SqliteRegistry(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        SqliteRegistry(tmp_path / "x.sqlite", timeout=-1)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_file_is_refused(path: Path) -> None:
    SqliteRegistry(path).close()
    path.chmod(0)
    try:
        with pytest.raises(PermissionError, match="permission"):
            SqliteRegistry(path)
    finally:
        path.chmod(0o600)


def test_a_file_that_is_not_a_store_is_refused_and_kept(tmp_path: Path) -> None:
    text_file = tmp_path / "notes.sqlite"
    text_file.write_text("just some notes, not a database\n" * 50)
    with pytest.raises(StoreFormatError, match="not a spanchunk store"):
        SqliteRegistry(text_file)
    assert text_file.read_text().startswith("just some notes")
    other_db = tmp_path / "other.db"
    with sqlite3.connect(other_db) as connection:
        connection.execute("CREATE TABLE t (x)")
        connection.execute("INSERT INTO t VALUES (1)")
    connection.close()
    with pytest.raises(StoreFormatError, match="SQLite database but not a spanchunk store"):
        SqliteRegistry(other_db)
    with sqlite3.connect(other_db) as connection:
        assert connection.execute("SELECT x FROM t").fetchall() == [(1,)]
    connection.close()
    assert issubclass(StoreFormatError, ValueError)


@pytest.mark.parametrize("version", [0, 2, 5])
def test_another_schema_is_refused_and_nothing_is_lost(path: Path, version: int) -> None:
    tree = make_tree()
    with SqliteRegistry(path) as store:
        store.add(tree)
    assert SCHEMA_VERSION == 1
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {version}")
    connection.close()
    with pytest.raises(StoreFormatError, match=rf"store of schema {version}.*reads schema 1"):
        SqliteRegistry(path)
    connection = sqlite3.connect(path)
    connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    connection.close()
    with SqliteRegistry(path) as store:
        assert list(store) == tree


def test_bad_chunks_and_metadata_store_nothing(store: Any) -> None:
    tree = make_tree()
    store.add(tree)
    with pytest.raises(TypeError, match="item 1 is str"):
        store.add([tree[0], "not a chunk"])
    with pytest.raises(TypeError, match="not str"):
        store.add("text")
    with pytest.raises(TypeError, match="fingerprint must be a str"):
        store.add(tree, fingerprint=5)
    with pytest.raises(TypeError, match="item 0 is dict"):
        store.upsert("doc-a", [{"id": "x"}])
    assert [c.id for c in store] == [c.id for c in tree]


def test_metadata_sqlite_cannot_keep_is_refused(path: Path) -> None:
    weird = make_tree(TEXT_B, "doc-w", when=object())
    numeric_keys = make_tree(TEXT_B, "doc-k", table={1: "one"})
    with SqliteRegistry(path) as store:
        store.add(make_tree())
        with pytest.raises(TypeError, match=r"metadata\['when'\] is a object"):
            store.add(weird)
        with pytest.raises(TypeError, match="key 1"):
            store.add(numeric_keys)
        assert len(store) == len(make_tree())


def test_metadata_is_plain_json_and_reads_back_exactly(path: Path) -> None:
    # SQL readers see plain JSON (a tuple is an array); the store gives back tuples as tuples
    # and lists as lists, at any depth, with the paths of the tuples in metadata_tuples.
    tree = make_tree(TEXT_B, "doc-j")
    metadata = {
        "tags": ("a", "b"),
        "raw": ["x", ("y", ["z"])],
        "nested": {"pair": (1, 2), "list": [3]},
        "\x00odd": "kept",
    }
    chunk = Chunk("j1", "text", "doc-j", 0, 0, 0, 4, 0, 4, None, (), MappingProxyType(metadata))
    heading = ParentChildChunker(200, 60, parent_chunker="markdown").chunk_tree(
        Document(MARKDOWN, id="doc-m")
    )
    with SqliteRegistry(path) as store:
        store.add(tree)
        store.upsert("doc-j", [chunk])
        store.add(heading)
        got = store.get("j1").metadata
        assert got == metadata
        assert type(got["tags"]) is tuple and type(got["raw"]) is list
        assert type(got["raw"][1]) is tuple and type(got["raw"][1][1]) is list
        assert type(got["nested"]["pair"]) is tuple and type(got["nested"]["list"]) is list
        markdown = [store.get(c.id) for c in heading]
        assert [c.metadata for c in markdown] == [c.metadata for c in heading]
        assert all(type(c.metadata["headings"]) is tuple for c in markdown)
    with sqlite3.connect(path) as connection:
        raw, tuples = connection.execute(
            "SELECT metadata, metadata_tuples FROM chunks WHERE id = 'j1'"
        ).fetchone()
        assert json.loads(raw)["raw"] == ["x", ["y", ["z"]]]
        assert json.loads(tuples) == [["tags"], ["raw", 1], ["nested", "pair"]]
        headings = connection.execute(
            "SELECT json_extract(metadata, '$.headings[1]'), metadata_tuples FROM chunks "
            "WHERE document_id = 'doc-m' AND json_array_length(metadata, '$.headings') = 2"
        ).fetchall()
        assert headings and set(headings) == {("Part (one)", '[["headings"]]')}


def test_closed_store_says_how_to_reopen(path: Path) -> None:
    store = SqliteRegistry(path)
    store.close()
    store.close()
    with pytest.raises(ValueError, match="closed: open it again"):
        len(store)


# ------------------------------------------------------------------------------ pickling


def test_pickles_by_path(path: Path) -> None:
    tree = make_tree()
    with SqliteRegistry(path, children=True) as store:
        store.add(tree)
        blob = pickle.dumps(store)
        assert len(blob) < 300  # the path and options, not the contents
    again = pickle.loads(blob)
    try:
        assert again.keeps_children and list(again) == tree
    finally:
        again.close()


def test_memory_registry_pickles_with_its_lifecycle_state() -> None:
    chunker = ParentChildChunker(160, 50)
    registry = ParentRegistry(children=True)
    tree = chunker.chunk_tree(Document(TEXT_A, id="doc-a"))
    registry.upsert("doc-a", tree, fingerprint=chunker.fingerprint())
    again = pickle.loads(pickle.dumps(registry))
    assert again.fingerprint == chunker.fingerprint() and again.keeps_children
    assert again.upsert("doc-a", tree) is False
    assert again.window("doc-a", 0, 0, 1) == [c for c in tree if c.level == 0][:2]


def test_a_spawned_worker_reopens_the_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(PYTHON_DIR), *sys.path]))
    tree = make_tree()
    leaves = [c for c in tree if c.level == 0]
    with SqliteRegistry(path) as store:
        store.add([c for c in tree if c.level > 0])
        with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
            assert pool.submit(len, store).result(timeout=120) == len(store)
            remote = pool.submit(SqliteRegistry.expand, store, leaves).result(timeout=120)
        assert [record(c) for c in remote] == [record(c) for c in store.expand(leaves)]


def test_threads_share_one_store(path: Path) -> None:
    trees = [make_tree(f"Thread {n}. " + TEXT_B, f"doc-{n}") for n in range(4)]
    with SqliteRegistry(path) as store:
        errors: list[BaseException] = []

        def work(tree: list[Chunk]) -> None:
            try:
                for _ in range(5):
                    store.upsert(tree[0].document_id, tree)
                    store.expand([c for c in tree if c.level == 0])
            except BaseException as error:  # pragma: no cover - reported below
                errors.append(error)

        threads = [threading.Thread(target=work, args=(tree,)) for tree in trees]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert len(store) == sum(len(tree) for tree in trees)


def test_a_forked_child_opens_its_own_connection(path: Path) -> None:
    if not hasattr(os, "fork"):  # pragma: no cover - Windows
        pytest.skip("no fork")
    with SqliteRegistry(path) as store:
        store.add(make_tree())
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.write(write, str(len(store)).encode())
                store.add(make_tree(TEXT_B, "doc-b"))
            finally:
                os._exit(0)
        os.close(write)
        counted = int(os.read(read, 100))
        os.close(read)
        os.waitpid(pid, 0)
        assert counted == len(make_tree())
        assert len(store) == len(make_tree()) + len(make_tree(TEXT_B, "doc-b"))


# ------------------------------------------------------------------------------ processes


def run_python(code: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_python(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PYTHON_DIR), *sys.path])}
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_persists_across_processes_and_restarts(path: Path) -> None:
    writer = run_python(
        """
        import sys
        from spanchunk import Document, ParentChildChunker, SqliteRegistry
        text, path = sys.argv[1], sys.argv[2]
        chunker = ParentChildChunker(parent_size=160, child_size=50)
        with SqliteRegistry(path, children=True) as store:
            tree = chunker.chunk_tree(Document(text, id="doc-a", metadata={"n": (1, 2)}))
            store.upsert("doc-a", tree, fingerprint=chunker.fingerprint())
        """,
        TEXT_A,
        str(path),
    )
    assert writer.returncode == 0, writer.stderr
    expected = ParentChildChunker(160, 50).chunk_tree(
        Document(TEXT_A, id="doc-a", metadata={"n": (1, 2)})
    )
    with SqliteRegistry(path) as store:  # this process: a restart, as far as the file knows
        assert [record(c) for c in store] == [record(c) for c in expected]
        assert store.fingerprint == ParentChildChunker(160, 50).fingerprint()
        assert store.upsert("doc-a", expected) is False
        store.add(make_tree(TEXT_B, "doc-b"))
    reader = run_python(
        """
        import json, sys
        from spanchunk import SqliteRegistry
        with SqliteRegistry(sys.argv[1], create=False) as store:
            print(json.dumps([c.to_dict() for c in store], default=list))
        """,
        str(path),
    )
    assert reader.returncode == 0, reader.stderr
    seen = json.loads(reader.stdout)
    wanted = [c.to_dict() for c in expected + make_tree(TEXT_B, "doc-b")]
    assert seen == json.loads(json.dumps(wanted, default=list))


VERSIONED_WRITER = """
import sys
from spanchunk import Document, ParentChildChunker, SqliteRegistry
path, writer, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
chunker = ParentChildChunker(parent_size=300, child_size=60)
body = "Sentence number {n} of the {d} document, version {v}. "
with SqliteRegistry(path, children=True) as store:
    for round_ in range(rounds):
        for d in range(4):
            version = f"{writer}-{round_}"
            text = "".join(body.format(n=n, d=d, v=version) for n in range(40 + 7 * round_))
            tree = chunker.chunk_tree(
                Document(text, id=f"doc-{d}", metadata={"version": version})
            )
            store.upsert(f"doc-{d}", tree, fingerprint=chunker.fingerprint())
print("done")
"""

CHECKING_READER = """
import collections, sys, time
from spanchunk import SqliteRegistry
path, seconds = sys.argv[1], float(sys.argv[2])
deadline = time.monotonic() + seconds
snapshots = 0
with SqliteRegistry(path, children=True) as store:
    while time.monotonic() < deadline:
        by_document = collections.defaultdict(list)
        for chunk in store:
            by_document[chunk.document_id].append(chunk)
        for document_id, chunks in by_document.items():
            versions = {c.metadata["version"] for c in chunks}
            assert len(versions) == 1, f"{document_id}: a mix of versions {versions}"
            ids = {c.id for c in chunks}
            for chunk in chunks:  # a whole tree: every parent's children are there
                assert set(chunk.child_ids) <= ids, f"{document_id}: a partial tree"
                assert chunk.parent_id is None or chunk.parent_id in ids
        snapshots += 1
print(snapshots)
"""


def test_two_writer_processes_and_a_reader_at_once(path: Path) -> None:
    SqliteRegistry(path, children=True).close()
    reader = start_python(CHECKING_READER, str(path), "6")
    writers = [start_python(VERSIONED_WRITER, str(path), name, "6") for name in ("w1", "w2")]
    for process in [*writers, reader]:
        out, err = process.communicate(timeout=180)
        assert process.returncode == 0, err
    assert int(out) > 0  # the reader took snapshots while the writers wrote
    with SqliteRegistry(path) as store:
        assert sorted(store.document_ids()) == [f"doc-{d}" for d in range(4)]
        for d in range(4):
            chunks = [c for c in store if c.document_id == f"doc-{d}"]
            assert {c.metadata["version"] for c in chunks} in ({"w1-5"}, {"w2-5"})


KILLED_WRITER = """
import os, sys, time
from spanchunk import Document, ParentChildChunker, SqliteRegistry
path = sys.argv[1]
chunker = ParentChildChunker(parent_size=2000, child_size=100)
store = SqliteRegistry(path, children=True)
connection = store._conn()
# Spill dirty pages into the WAL file mid-transaction, so the kill leaves them on disk.
# No checkpoints, so the WAL only grows and its size shows what the killed transaction wrote.
connection.execute("PRAGMA cache_size = 8")
connection.execute("PRAGMA wal_autocheckpoint = 0")
state = {"inside": False, "steps": 0, "wal": 0}

def progress():
    if state["inside"]:
        state["steps"] += 1
        if state["steps"] == 200:
            print("inside", state["wal"], os.path.getsize(path + "-wal"), flush=True)
            time.sleep(60)  # killed here, in the middle of the upsert's transaction
    return 0

connection.set_progress_handler(progress, 1000)
for d in range(4):
    text = f"Document {d}. " + "A line of a long document that goes on. " * 20000
    tree = chunker.chunk_tree(Document(text, id=f"doc-{d}"))
    state["inside"] = d == 3
    state["wal"] = os.path.getsize(path + "-wal")
    store.upsert(f"doc-{d}", tree, fingerprint=chunker.fingerprint())
    print(f"committed doc-{d} {len(tree)}", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL")
def test_a_writer_killed_mid_upsert_loses_nothing_committed(path: Path) -> None:
    process = start_python(KILLED_WRITER, str(path))
    committed: dict[str, int] = {}
    wal_sizes: list[int] = []
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("committed"):
            _, document_id, count = line.split()
            committed[document_id] = int(count)
        elif line.startswith("inside"):
            os.kill(process.pid, signal.SIGKILL)
            wal_sizes = [int(size) for size in line.split()[1:]]
            break
    process.wait(timeout=60)
    assert process.stderr is not None
    stderr = process.stderr.read()
    process.stdout.close()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL, stderr
    assert sorted(committed) == ["doc-0", "doc-1", "doc-2"]
    before, during = wal_sizes
    assert during > before + 100_000  # the killed transaction had written pages to the WAL
    with SqliteRegistry(path, children=True) as store:
        counts: dict[str, int] = {}
        for chunk in store:
            counts[chunk.document_id] = counts.get(chunk.document_id, 0) + 1
        assert counts == committed  # doc-3: not there at all, not half there
        expected = ParentChildChunker(2000, 100).chunk_tree(
            Document(
                "Document 1. " + "A line of a long document that goes on. " * 20000, id="doc-1"
            )
        )
        assert store.window("doc-1", 0, 0, 10**6) == [c for c in expected if c.level == 0]
        # and the store still takes writes after the crash
        assert store.upsert("doc-3", make_tree(TEXT_B, "doc-3")) is True


@pytest.mark.parametrize(
    "module",
    [
        "spanchunk.stores.sqlite",
        "spanchunk.stores.sqlite_file",
        "spanchunk.stores.memory",
        "spanchunk.stores.protocol",
        "spanchunk.retrieval",
        "spanchunk.retrieval.merge",
        "spanchunk.retrieval.adjacent",
        "spanchunk.retrieval.attach",
    ],
)
def test_docstring_examples(module: str) -> None:
    imported = importlib.import_module(module)
    failures, tried = doctest.testmod(imported, optionflags=doctest.ELLIPSIS)
    assert tried and not failures


def test_a_second_writer_waits_then_times_out_while_readers_read(path: Path) -> None:
    tree = make_tree()
    with SqliteRegistry(path) as holder, SqliteRegistry(path, timeout=0.2) as waiter:
        holder.add(tree)
        holder._conn().execute("BEGIN IMMEDIATE")  # another writer's open transaction
        try:
            with pytest.raises(TimeoutError, match=r"one writer at a time.*longer timeout"):
                waiter.add(make_tree(TEXT_B, "doc-b"))
            assert list(waiter) == tree  # reading never waits for the writer
        finally:
            holder._conn().execute("ROLLBACK")
        waiter.add(make_tree(TEXT_B, "doc-b"))  # the lock is free again
        assert len(holder) == len(tree) + len(make_tree(TEXT_B, "doc-b"))
