"""Ingestion: keep chunks in step with files and folders.

The one implementation of what an ingestion job does with files, below the command line,
``spanchunk.batch`` and the integrations:

- the walk (``files.py``): PATHs, folders in sorted order, globs, hidden entries and the
  run's own outputs left out, what is skipped and why;
- reading (``reading.py``): bytes, byte order marks, binary detection, decoding, and the one
  document id of a file (``document_id``), for every output and ``read_document``;
- which chunker cuts which file (``formats.py``);
- the pool (``pool.py``) and what a worker does with a batch (``jobs.py``);
- the stat cache (``statcache.py``), prune (``prune.py``) and the run into a store
  (``store_sink.py``), whose SQL is the store's own (``spanchunk.stores``);
- one run (``run.py``) and its report (``report.py``); ``sync`` (``sync.py``), public.

Example:
    >>> from spanchunk.ingest import document_id, read_document, sync
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spanchunk.ingest.files import Globs, shown
    from spanchunk.ingest.formats import FileChunkers
    from spanchunk.ingest.reading import document_id, read_document
    from spanchunk.ingest.report import Progress, SyncReport
    from spanchunk.ingest.sync import sync

__all__ = [
    "FileChunkers",
    "Globs",
    "Progress",
    "SyncReport",
    "document_id",
    "read_document",
    "shown",
    "sync",
]

# Each public name from its module, imported when first asked for: the command line imports
# a few modules of this package at its start, and the rest (the run, the store's writer)
# only when a run needs them; importing them all with the package cost 20 ms of its startup.
_HOMES = {
    "FileChunkers": "formats",
    "Globs": "files",
    "Progress": "report",
    "SyncReport": "report",
    "document_id": "reading",
    "read_document": "reading",
    "shown": "files",
    "sync": "sync",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'spanchunk.ingest' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    value = getattr(importlib.import_module(f"spanchunk.ingest.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
