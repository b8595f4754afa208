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
