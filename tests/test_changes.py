"""The store's change feed: ids that follow the text, numbered changes, consumers that resume
where they stopped (a killed one included), compaction, and a folder kept in step with an
index through ``sync`` and ``apply_changes`` over several rounds of edits."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from spanchunk import Document, ParentChildChunker, SqliteRegistry
from spanchunk._core import text_id
from spanchunk.ingest import sync
from spanchunk.stores.changes import ChangesCompacted, Upsert, apply_changes

PARAGRAPHS = [f"Paragraph {n} tells its own small story about item {n}." for n in range(30)]
CHUNKER = ParentChildChunker(300, 80)


class Index:
    """A vector database stand-in keyed by id: what an index holds, and what it was sent."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.embedded = 0
        self.by_text: set[str] = set()

    def upsert(self, upserts: list[Upsert]) -> None:
        for item in upserts:
            assert isinstance(item, Upsert)
            if item.text_hash not in self.by_text:  # a vector it has for that text is reused
                self.embedded += 1
                self.by_text.add(item.text_hash)
            self.texts[item.id] = item.text

    def delete(self, ids: list[str]) -> None:
        for chunk_id in ids:
            self.texts.pop(chunk_id, None)

    def clear(self) -> None:
        self.texts.clear()


def leaves(store: SqliteRegistry) -> dict[str, str]:
    return {chunk.id: chunk.text for chunk in store if chunk.level == 0}


def test_an_edit_at_the_top_renews_only_the_chunks_it_changed(tmp_path: Path) -> None:
    text = "\n\n".join(PARAGRAPHS)
    with SqliteRegistry(tmp_path / "s.sqlite", children=True) as store:
        assert store.change_number() == 0
        store.upsert("d", CHUNKER.chunk_tree(Document(text, id="d")))
        first = store.change_number()
        assert first == 1
        whole = store.changes(since=0)
        assert whole.full and not whole.deletes and whole.position == 1
        assert {u.id for u in whole.upserts} == {c.id for c in store}
        old_leaves = leaves(store)

        edited = "A new first paragraph, written on top of the old ones.\n\n" + text
        store.upsert("d", CHUNKER.chunk_tree(Document(edited, id="d")))
        feed = store.changes(since=first, levels=[0])
        assert feed.position == 2 and not feed.full
        # The new paragraph is the one new leaf; every old leaf kept its id, though moved.
        assert [u.text for u in feed.upserts] == [
            "A new first paragraph, written on top of the old ones."
        ]
        assert feed.deletes == ()
        assert set(old_leaves) < set(leaves(store))
        moved = store.get(next(iter(old_leaves)))
        assert moved is not None and moved.start_char > 0  # its offsets follow the text
        # The parents' texts changed: at level 1 the feed replaces them.
        parents = store.changes(since=first, levels=[1])
        assert parents.upserts and parents.deletes
        assert store.changes(since=2).upserts == ()


def test_identical_paragraphs_keep_apart_and_deletes_cascade(tmp_path: Path) -> None:
    text = "\n\n".join(["The same line again."] * 6 + PARAGRAPHS[:3])
    with SqliteRegistry(tmp_path / "s.sqlite", children=True) as store:
        tree = CHUNKER.chunk_tree(Document(text, id="twins"))
        assert len({c.id for c in tree}) == len(tree)
        store.upsert("twins", tree)
        store.upsert("other", CHUNKER.chunk_tree(Document(PARAGRAPHS[5], id="other")))
        before = store.change_number()
        assert store.delete_document("twins") == len(tree)
        feed = store.changes(since=before)
        assert set(feed.deletes) == {c.id for c in tree}  # every level, nothing left behind
        assert feed.upserts == ()


def test_a_consumer_resumes_and_a_killed_one_converges(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    index_path = tmp_path / "index.sqlite"
    with SqliteRegistry(path, children=True) as store:
        store.upsert("d", CHUNKER.chunk_tree(Document("\n\n".join(PARAGRAPHS), id="d")))
    # A consumer in another process writes the index, then is killed before it moves its
    # position: the next run applies the same changes again, with the same result.
    script = textwrap.dedent(
        f"""
        import os, signal, sqlite3
        from spanchunk import SqliteRegistry
        index = sqlite3.connect({str(index_path)!r})
        index.execute("CREATE TABLE IF NOT EXISTS v (id TEXT PRIMARY KEY, text TEXT)")
        with SqliteRegistry.open({str(path)!r}) as store:
            feed = store.changes(consumer="index", levels=[0])
            index.executemany("DELETE FROM v WHERE id = ?", [(i,) for i in feed.deletes])
            index.executemany(
                "INSERT OR REPLACE INTO v VALUES (?, ?)", [(u.id, u.text) for u in feed.upserts]
            )
            index.commit()
            if os.environ.get("KILL"):
                os.kill(os.getpid(), signal.SIGKILL)
            store.acknowledge("index", feed.position)
        """
    )

    def consume(kill: bool) -> int:
        env = {**os.environ, "KILL": "1" if kill else ""}
        return subprocess.run([sys.executable, "-c", script], env=env, check=False).returncode

    assert consume(kill=True) == -signal.SIGKILL
    with SqliteRegistry.open(path) as store:
        assert store.consumer_position("index") == 0
        store.upsert("d", CHUNKER.chunk_tree(Document("\n\n".join(PARAGRAPHS[3:]), id="d")))
    assert consume(kill=True) == -signal.SIGKILL
    assert consume(kill=False) == 0
    with SqliteRegistry.open(path) as store, sqlite3.connect(index_path) as index:
        assert dict(index.execute("SELECT id, text FROM v").fetchall()) == leaves(store)
        assert store.consumer_position("index") == store.change_number() == 2
        assert store.changes(consumer="index").upserts == ()


def test_compaction_waits_for_consumers_and_tells_the_late_to_rebuild(tmp_path: Path) -> None:
    with SqliteRegistry(tmp_path / "s.sqlite", children=True) as store:
        index = Index()
        for round_ in range(3):
            text = "\n\n".join(PARAGRAPHS[round_:])
            store.upsert("d", CHUNKER.chunk_tree(Document(text, id="d")))
        apply_changes(store, index.upsert, index.delete, consumer="a")
        assert index.texts == leaves(store)
        store.acknowledge("b", 1)
        assert store.compact() == 1  # b has applied change 1 only
        assert store.changes(consumer="b").position == 3
        store.remove_consumer("b")
        assert store.compact() == 3
        with pytest.raises(ChangesCompacted, match=r"rebuild the index from changes\(since=0\)"):
            store.changes(since=2)
        stale = Index()
        stale.texts["gone"] = "a vector of a chunk deleted long ago"
        store.acknowledge("stale", 2)
        with pytest.raises(ChangesCompacted):
            apply_changes(store, stale.upsert, stale.delete, consumer="stale")
        feed = apply_changes(
            store, stale.upsert, stale.delete, consumer="stale", rebuild=stale.clear
        )
        assert feed.full and stale.texts == leaves(store)
        # A consumer removed and back missed what was compacted meanwhile: it rebuilds.
        back = Index()
        apply_changes(store, back.upsert, back.delete, consumer="back")
        store.remove_consumer("back")
        assert "back" not in store.consumers()
        store.upsert("d", CHUNKER.chunk_tree(Document(PARAGRAPHS[0], id="d")))
        store.compact()
        with pytest.raises(ChangesCompacted, match="was removed"):
            store.changes(consumer="back")
        apply_changes(store, back.upsert, back.delete, consumer="back", rebuild=back.clear)
        assert back.texts == leaves(store)
        # clear() starts over: every reader rebuilds.
        store.clear()
        with pytest.raises(ChangesCompacted):
            store.changes(consumer="a")
        apply_changes(store, index.upsert, index.delete, consumer="a", rebuild=index.clear)
        assert index.texts == {}


def test_feed_arguments_are_checked(tmp_path: Path) -> None:
    with SqliteRegistry(tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError, match="one of the two"):
            store.changes()
        with pytest.raises(ValueError, match="one of the two"):
            store.changes(since=0, consumer="x")
        with pytest.raises(ValueError, match="not a change number of this store"):
            store.changes(since=5)
        with pytest.raises(ValueError, match="non-negative ints"):
            store.changes(since=0, levels=["0"])  # type: ignore[list-item]
        with pytest.raises(ValueError, match="not a change number"):
            store.acknowledge("x", 3)
        with pytest.raises(ValueError, match="non-empty str"):
            store.acknowledge("", 0)


def test_a_folder_kept_in_step_with_an_index_over_rounds(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(6):
        (folder / f"f{n}.txt").write_text("\n\n".join(PARAGRAPHS[n : n + 12]), encoding="utf-8")
    store_path = tmp_path / "store.sqlite"
    index = Index()

    def round_(prune: bool = False) -> int:
        report = sync(folder, store_path, CHUNKER, prune=prune)
        assert report is not None
        with SqliteRegistry.open(store_path) as store:
            before = index.embedded
            apply_changes(store, index.upsert, index.delete, consumer="vectors")
            assert index.texts == leaves(store)
            return index.embedded - before

    first = round_()  # a new store, loaded in bulk: the feed is its whole state
    assert first > 0
    assert round_() == 0  # nothing changed
    # An edit at the top of one file: one new leaf to embed, not the whole file.
    path = folder / "f0.txt"
    path.write_text("A brand new opening, on top.\n\n" + path.read_text(encoding="utf-8"))
    assert round_() == 1
    # A renamed file and a copy: their texts have vectors already.
    os.rename(folder / "f1.txt", folder / "g1.txt")
    shutil.copy(folder / "f2.txt", folder / "copy.txt")
    assert round_(prune=True) == 0
    # A deleted file, pruned: its vectors go (checked by round_), every level from the store.
    (folder / "f3.txt").unlink()
    assert round_(prune=True) == 0
    with SqliteRegistry.open(store_path) as store:
        assert not any(str(folder / "f3.txt") == chunk.document_id for chunk in store)
    # A new file.
    (folder / "new.txt").write_text("Something nobody wrote before, at all.", encoding="utf-8")
    assert round_() == 1


def test_the_command_line_says_the_change_number(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
    store = str(tmp_path / "s.sqlite")

    def run() -> str:
        done = subprocess.run(
            [sys.executable, "-m", "spanchunk", "chunk", str(folder), "-o", store],
            capture_output=True,
            text=True,
            check=True,
        )
        return next(line for line in done.stderr.splitlines() if "store:" in line)

    assert run().endswith("0 pruned; change 1")
    assert run().endswith("; change 1")  # nothing changed: no new change
    (folder / "b.txt").write_text("Another file, with words of its own.", encoding="utf-8")
    assert run().endswith("; change 2")
    with SqliteRegistry.open(store) as opened:
        feed = opened.changes(since=1)
        assert [u.text for u in feed.upserts if u.chunk.level == 0] == [
            "Another file, with words of its own."
        ]
    api = tmp_path / "api.sqlite"
    assert sync(folder, api, CHUNKER).change_number == 1
    assert sync(folder, api, CHUNKER).change_number == 1


def test_the_changes_command_writes_the_feed(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
    (folder / "b.txt").write_text("\n\n".join(PARAGRAPHS[:4]), encoding="utf-8")
    store = str(tmp_path / "s.sqlite")

    def spanchunk(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "spanchunk", *args], capture_output=True, text=True, check=False
        )

    sizes = ("--parent-size", "300", "--child-size", "80")
    assert spanchunk("chunk", str(folder), *sizes, "-o", store).returncode == 0
    whole = spanchunk("changes", store, "--since", "0", "--levels", "0")
    assert whole.returncode == 0, whole.stderr
    records = [json.loads(line) for line in whole.stdout.splitlines()]
    with SqliteRegistry.open(store) as opened:
        assert {r["id"]: r["text"] for r in records} == leaves(opened)
        for record in records:
            chunk = opened[record["id"]]
            assert record["text_hash"] == text_id(chunk.text)
            assert record["metadata"] == dict(chunk.metadata)
            assert (record["start_char"], record["end_byte"]) == (chunk.start_char, chunk.end_byte)
    assert "from change 0 to change 1" in whole.stderr
    # A consumer: the feed written whole, then its position moved.
    out = tmp_path / "feed.jsonl"
    first = spanchunk("changes", store, "--consumer", "vec", "-o", str(out), "--acknowledge")
    assert first.returncode == 0 and "(consumer vec moved to it)" in first.stderr
    (folder / "b.txt").unlink()
    (folder / "a.txt").write_text("A new line at the very top of a.\n\n" + "\n\n".join(PARAGRAPHS))
    assert spanchunk("chunk", str(folder), *sizes, "-o", store, "--prune").returncode == 0
    parquet = tmp_path / "feed.parquet"
    done = spanchunk("changes", store, "--consumer", "vec", "--levels", "0", "-o", str(parquet))
    assert done.returncode == 0, done.stderr
    table = pq.read_table(parquet).to_pylist()
    upserts = [row["text"] for row in table if row["op"] == "upsert"]
    deletes = [row["id"] for row in table if row["op"] == "delete"]
    assert upserts == ["A new line at the very top of a."]
    assert len(deletes) == 4  # b.txt's four children
    assert [row["op"] for row in table][: len(deletes)] == ["delete"] * len(deletes)
    with SqliteRegistry.open(store) as opened:
        assert opened.consumer_position("vec") == 1  # not acknowledged
    # Mistakes get a clear message.
    wrong = spanchunk("changes", store, "--since", "9")
    assert wrong.returncode == 1 and "not a change number of this store" in wrong.stderr
    lone = spanchunk("changes", store, "--since", "0", "--acknowledge")
    assert lone.returncode == 2 and "add --consumer NAME" in lone.stderr
    missing = spanchunk("changes", str(tmp_path / "nope.sqlite"), "--since", "0")
    assert missing.returncode == 1 and "no spanchunk store" in missing.stderr
    both = spanchunk("changes", store)
    assert both.returncode == 2


def test_a_dry_run_says_the_chunks_each_file_would_add_and_delete(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("\n\n".join(PARAGRAPHS), encoding="utf-8")
    (folder / "b.txt").write_text("\n\n".join(PARAGRAPHS[:2]), encoding="utf-8")
    store = str(tmp_path / "s.sqlite")
    sizes = ("--parent-size", "300", "--child-size", "80")

    def spanchunk(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "spanchunk", "chunk", str(folder), *sizes, "-o", store, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    spanchunk()
    (folder / "a.txt").write_text("A new line at the very top of a.\n\n" + "\n\n".join(PARAGRAPHS))
    (folder / "b.txt").unlink()
    (folder / "c.txt").write_text("A third file.", encoding="utf-8")
    with SqliteRegistry.open(store) as opened:
        before = {c.id for c in opened}
        b_chunks = {c.id for c in opened if c.document_id == str((folder / "b.txt").resolve())}
    listing = spanchunk("--dry-run", "--prune")
    lines = {line.split()[0]: line for line in listing.splitlines() if line.split()}
    # a.txt: the new child, and the parents whose text changed, added; those parents deleted.
    replaced = lines["replace"]
    assert replaced.endswith("chunks)") and "+" in replaced
    assert lines["add"].endswith("(+2 -0 chunks)")  # c.txt: one parent, one child
    assert lines["prune"].endswith(f"(-{len(b_chunks)} chunks)")
    # The counts are what the run then does.
    spanchunk("--prune")
    with SqliteRegistry.open(store) as opened:
        after = {c.id for c in opened}
    added, deleted = len(after - before), len(before - after)
    assert f"chunks +{added} -{deleted}" in listing.splitlines()[-1]
