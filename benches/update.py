"""What a real update costs in embeddings: the standard library of one Python patch release
replaced by the next's, at the same path, through the store, its change feed and a vector
database; against the floor and LangChain's indexing API.

The two libraries are the ``.py`` files outside ``test/`` and ``site-packages/`` of two Python
installations (by default Debian's 3.11 at ``/usr/lib/python3.11`` and pyenv's newest 3.11), each
staged in turn at one path, as an update in place would be. For each settings (text and code
structure), this syncs the first into a new store and applies the feed to an index (a dict
keyed by chunk id, counting the texts it is asked to embed), then stages the second, syncs with
``prune`` and applies the feed again. It reports, for the update:

- the children in the changed files (what re-embedding each changed file sends);
- the children the feed sends (each embedded unless its text hash is one the index has);
- the floor: the children whose text does not occur in the old version of their file;
- whether the index then equals one built from the second library alone (ids and texts);

and the same update through LangChain's ``index()`` (an ``InMemoryRecordManager``,
``cleanup="incremental"``, its recursive splitter at 400 chars): the texts it embeds, and its
time beside spanchunk's sync and apply. Writes ``benches/results/update.md``.

Usage (from the repository root)::

    python benches/update.py [--old /usr/lib/python3.11] [--new PATH]
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from spanchunk import ParentChildChunker, SqliteRegistry
from spanchunk.ingest import sync
from spanchunk.stores import Upsert, apply_changes

REPOSITORY = Path(__file__).resolve().parent.parent
RESULTS = REPOSITORY / "benches" / "results" / "update.md"
FLOOR = "floor: children whose text no child of the old file had"


def library(root: Path) -> dict[str, str]:
    """The ``.py`` files of a library folder outside ``test/`` and ``site-packages/``, by
    relative path."""
    files = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if {"test", "site-packages"} & set(relative.parts) or not path.is_file():
            continue
        try:
            files[str(relative)] = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
    return files


def stage(files: dict[str, str], into: Path) -> None:
    """``files`` at ``into``, replacing what was there (the files' times move on, as an
    update's do)."""
    if into.exists():
        shutil.rmtree(into)
    for relative, text in files.items():
        path = into / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


class Index:
    """A vector database keyed by chunk id; ``asked`` counts the texts it had to embed (a
    text whose hash it holds a vector for is reused)."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}
        self.vectors: set[str] = set()
        self.sent = 0
        self.asked = 0

    def upsert(self, items: list[Upsert]) -> None:
        for item in items:
            self.sent += 1
            if item.text_hash not in self.vectors:
                self.asked += 1
                self.vectors.add(item.text_hash)
            self.texts[item.id] = item.text

    def delete(self, ids: list[str]) -> None:
        for chunk_id in ids:
            self.texts.pop(chunk_id, None)


def leaves(store: SqliteRegistry) -> dict[str, str]:
    return {chunk.id: chunk.text for chunk in store if chunk.level == 0}


def spanchunk_update(
    old: dict[str, str], new: dict[str, str], work: Path, chunker: ParentChildChunker
) -> dict[str, Any]:
    staged = work / "lib"
    store = work / "store.sqlite"
    for path in work.glob("store.sqlite*"):
        path.unlink()
    stage(old, staged)
    sync(staged, store, chunker)
    index = Index()
    with SqliteRegistry.open(store) as opened:
        apply_changes(opened, index.upsert, index.delete, consumer="index")
        before = {c.id: c for c in opened if c.level == 0}
    stage(new, staged)
    index.sent = index.asked = 0
    started = time.perf_counter()
    sync(staged, store, chunker, prune=True)
    with SqliteRegistry.open(store) as opened:
        feed = apply_changes(opened, index.upsert, index.delete, consumer="index")
        after = {c.id: c for c in opened if c.level == 0}
    seconds = time.perf_counter() - started
    # The floor: children of the changed files whose text the old version does not hold.
    changed = {name for name in new if old.get(name) != new[name]}
    root = str(staged.resolve())
    old_texts: dict[str, set[str]] = {}
    for chunk in before.values():
        old_texts.setdefault(os.path.relpath(chunk.document_id, root), set()).add(chunk.text)
    in_changed = floor = new_text = 0
    for chunk in after.values():
        name = os.path.relpath(chunk.document_id, root)
        if name in changed:
            in_changed += 1
            if chunk.text not in old_texts.get(name, ()):
                floor += 1
            if chunk.text not in old.get(name, ""):
                new_text += 1
    # The same library, alone, in a new store.
    fresh = work / "fresh.sqlite"
    for path in work.glob("fresh.sqlite*"):
        path.unlink()
    sync(staged, fresh, chunker)
    with SqliteRegistry.open(fresh) as opened:
        equal = index.texts == leaves(opened)
    return {
        "changed files": len(changed),
        "children before": len(before),
        "children after": len(after),
        "children in the changed files": in_changed,
        "children sent": index.sent,
        "children embedded": index.asked,
        "deletes": len(feed.deletes),
        "floor: children whose text no child of the old file had": floor,
        "children whose text is nowhere in the old file": new_text,
        "equal to a fresh index": equal,
        "seconds": seconds,
    }


def langchain_update(
    old: dict[str, str], new: dict[str, str], work: Path, batch_size: int = 100
) -> dict[str, Any]:
    # LangChain is imported only for its part of the report.
    from langchain_core.documents import Document  # noqa: PLC0415
    from langchain_core.embeddings import Embeddings  # noqa: PLC0415
    from langchain_core.indexing import InMemoryRecordManager, index  # noqa: PLC0415
    from langchain_core.vectorstores import InMemoryVectorStore  # noqa: PLC0415
    from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: PLC0415

    class Counting(Embeddings):
        def __init__(self) -> None:
            self.count = 0

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            self.count += len(texts)
            return [[float(len(text)), 1.0] for text in texts]

        def embed_query(self, text: str) -> list[float]:
            return [float(len(text)), 1.0]

    embedding = Counting()
    store = InMemoryVectorStore(embedding)
    records = InMemoryRecordManager("update")
    records.create_schema()
    splitter = RecursiveCharacterTextSplitter(chunk_size=400, chunk_overlap=0)
    root = str(work / "lib")

    def documents(files: dict[str, str]) -> list[Any]:
        return splitter.split_documents(
            [
                Document(page_content=text, metadata={"source": os.path.join(root, name)})
                for name, text in files.items()
            ]
        )

    options: dict[str, Any] = {"cleanup": "incremental", "source_id_key": "source"}
    index(documents(old), records, store, batch_size=batch_size, **options)
    embedding.count = 0
    started = time.perf_counter()
    chunks = documents(new)
    result = index(chunks, records, store, batch_size=batch_size, **options)
    return {
        "chunks": len(chunks),
        "embedded": embedding.count,
        "added": result["num_added"],
        "deleted": result["num_deleted"],
        "seconds": time.perf_counter() - started,
    }


def newest_pyenv_311() -> str:
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.11.*/lib/python3.11")))
    return found[-1] if found else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="/usr/lib/python3.11")
    parser.add_argument("--new", default=newest_pyenv_311())
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    old = library(Path(args.old))
    # The same paths in the new library: what an update of the old one's packages installs.
    new = {name: text for name, text in library(Path(args.new)).items() if name in old}
    lines = [
        "# An update in place: one standard library replaced by the next",
        "",
        f"Old: `{args.old}` ({len(old)} files); new: `{args.new}`, the same paths ({len(new)} "
        "files); the .py files outside test/ and site-packages/, staged at one path in turn.",
        "",
    ]
    with tempfile.TemporaryDirectory() as temp:
        work = Path(temp)
        rows = {}
        for name, chunker in (
            ("text", ParentChildChunker(2000, 400)),
            ("code", ParentChildChunker(2000, 400, parent_chunker="code")),
        ):
            rows[name] = spanchunk_update(old, new, work, chunker)
        keys = list(rows["text"])
        lines += ["| ParentChildChunker(2000, 400) | text | code |", "|---|---:|---:|"]
        for key in keys:
            values = [rows[name][key] for name in ("text", "code")]
            shown = [f"{v:.2f}" if isinstance(v, float) else str(v) for v in values]
            lines.append(f"| {key} | {shown[0]} | {shown[1]} |")
        for name in ("text", "code"):
            row = rows[name]
            floor = max(1, row[FLOOR])
            lines.append(
                f"\n{name}: embedded / floor = {row['children embedded'] / floor:.2f}; "
                f"sent / floor = {row['children sent'] / floor:.2f}"
            )
        for batch_size in (100, 100_000):
            chain = langchain_update(old, new, work, batch_size)
            lines += [
                "",
                'LangChain `index()` (InMemoryRecordManager, cleanup="incremental", '
                f"RecursiveCharacterTextSplitter(400), batch_size={batch_size}), the same "
                "update: "
                + ", ".join(
                    f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in chain.items()
                ),
            ]
    report = "\n".join(lines) + "\n"
    print(report)
    Path(args.output).write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
