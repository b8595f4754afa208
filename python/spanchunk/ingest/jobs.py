"""What a worker does with a batch of files: read, cut and prepare the output (JSON Lines
bytes or a Parquet row group, made by the core; a store's rows, ``statcache.StoreJob``).

Speed: ``benches/NOTES.md``, under ``python/spanchunk/ingest/jobs.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from spanchunk import _core
from spanchunk.chunkers import hooks
from spanchunk.ingest.reading import Skip, document_id, read_source

if TYPE_CHECKING:
    from spanchunk.ingest.files import File
    from spanchunk.ingest.formats import FileChunkers

__all__ = ["BatchJob", "BatchResult", "CoreJob", "Part"]


class Part(NamedTuple):
    """What the core wrote for a run of consecutive files cut by one chunker."""

    written: Any
    sources: list[str]
    document_ids: list[str]


class BatchResult:
    """A batch's output and what happened to each of its files.

    ``documents`` counts every text file of the batch, ``bytes_read`` their bytes (their
    sizes as listed; for the store, as read); for a
    store, ``added``, ``replaced`` and ``unchanged`` split them (an unchanged file is read
    and hashed, not cut).
    """

    __slots__ = (
        "added",
        "bytes_read",
        "documents",
        "parts",
        "replaced",
        "sizes",
        "skipped_files",
        "skips",
        "stale",
        "unchanged",
        "unchanged_bytes",
    )

    def __init__(self) -> None:
        self.parts: list[Part] = []
        self.skips: list[tuple[str, str, str]] = []
        self.documents = 0
        self.bytes_read = 0
        self.sizes = _core.ChunkSizes()
        self.added = 0
        self.replaced = 0
        self.unchanged = 0
        #: The bytes of the unchanged documents (read and hashed, not cut).
        self.unchanged_bytes = 0
        #: For a store: the stored documents whose files were skipped this time (now binary,
        #: not text, unreadable): they keep their last version.
        self.stale = 0
        #: For a store: the skipped files to record (``_store.SkippedFile``).
        self.skipped_files: list[Any] = []


class BatchJob(Protocol):
    """What a worker does with a batch of files (picklable, for a process pool)."""

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """Read, cut and prepare the output of one batch."""
        ...


def process_batch(job: CoreJob, batch: Sequence[File]) -> BatchResult:
    """Read, cut and write one batch (runs in a worker): one core call, which reads the files
    too and cuts each with its chunker (GIL released); for Parquet, it encodes the batch's
    row group too. With an input encoding (or stdin's document) the files are read here
    (``reading.read_source``), and the core takes their text."""
    result = BatchResult()
    sources = [file.path for file in batch]
    document_ids = [file.resolved or document_id(file.path) for file in batch]
    chunker_of = [job.chunkers.chunker_index(path) for path in sources]
    if job.chunkers.input_encoding is None and all(file.data is None for file in batch):
        written, failures, sizes = _core.write_files(
            job.core_chunkers,
            sources,
            sources,
            job.core_format,
            sum(file.size for file in batch),
            job.parquet,
            chunker_of,
            document_ids,
        )
    else:
        failures, datas, kept = [], [], []
        for position, file in enumerate(batch):
            read = read_source(file, job.chunkers.input_encoding)
            if isinstance(read, Skip):
                failures.append((read.kind, read.message))
            else:
                datas.append(read[0])
                kept.append(position)
                failures.append(None)
        written, cut_failures, sizes = _core.write_documents(
            job.core_chunkers,
            datas,
            [sources[position] for position in kept],
            job.core_format,
            job.parquet,
            [chunker_of[position] for position in kept],
            [document_ids[position] for position in kept],
        )
        for position, failure in zip(kept, cut_failures, strict=True):
            failures[position] = failure
    for file, failure in zip(batch, failures, strict=True):
        if failure is None:
            result.documents += 1
            result.bytes_read += file.size
        else:
            kind, message = failure
            result.skips.append((file.path, kind, message))
    result.parts.append(Part(written, sources, []))
    result.sizes.merge(sizes)
    return result


class CoreJob(NamedTuple):
    """The JSON Lines and Parquet job: the core cuts and writes each batch of files.

    ``core_chunkers`` is what ``_core.write_files`` takes of the chunkers (the text one,
    the Markdown one, then the code ones, ``FileChunkers.all``): their levels and fingerprints,
    made once per run; ``parquet`` the Parquet file's ``_core.ParquetEncoder``.
    """

    chunkers: FileChunkers
    core_format: str
    core_chunkers: list[tuple[list[Any], str]]
    parquet: Any = None

    @classmethod
    def of(cls, chunkers: FileChunkers, core_format: str, parquet: Any = None) -> CoreJob:
        """The job of ``chunkers`` writing ``core_format``."""
        pairs = [(hooks.levels(chunker), chunker.fingerprint()) for chunker in chunkers.all()]
        return cls(chunkers, core_format, pairs, parquet)

    def __call__(self, batch: Sequence[File]) -> BatchResult:
        """``process_batch`` on this job's settings."""
        return process_batch(self, batch)

    def __reduce__(self) -> tuple[Any, ...]:
        # For a process pool: the core's splitters are made again from the chunkers there.
        return (CoreJob.of, (self.chunkers, self.core_format, self.parquet))
