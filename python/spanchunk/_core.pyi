# Signatures of the private Rust extension, and nothing else. What each one does is
# documented once, in python/spanchunk/chunkers/spans.py; spanchunk.Chunk (this Chunk) is
# documented on the Rust type (the `///` comment on PyChunk in rust/).
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__version__: str

SPAN_COLUMNS: tuple[str, ...]
BLANK_CHARS: str

class Splitter:
    def __new__(
        cls,
        chunk_size: int,
        *,
        overlap: int = 0,
        min_chunk_size: int = 0,
        separators: Sequence[Sequence[str]] | None = None,
        keep_separator: str = "end",
        trim: bool = True,
        unit: str = "char",
        structure: str | None = None,
        merge: str = "boundary",
        encoding: str | None = None,
        tokenizer_json: str | None = None,
        length_function: Callable[[str], int] | None = None,
        language: str | None = None,
    ) -> Splitter: ...
    def measure(self, text: str) -> int: ...
    @property
    def chunk_size(self) -> int: ...
    @property
    def overlap(self) -> int: ...
    @property
    def min_chunk_size(self) -> int: ...
    @property
    def separators(self) -> list[list[str]]: ...
    @property
    def keep_separator(self) -> str: ...
    @property
    def trim(self) -> bool: ...
    @property
    def unit(self) -> str: ...
    @property
    def structure(self) -> str | None: ...
    @property
    def language(self) -> str | None: ...
    @property
    def merge(self) -> str: ...
    @property
    def seekable(self) -> bool: ...
    def split(self, text: str) -> NDArray[np.int64]: ...

def default_separators(unit: str = "char") -> list[list[str]]: ...
def sentence_separator() -> str: ...
def forget_token_counts() -> None: ...

@final
class Tree:
    def __new__(cls, levels: Sequence[Splitter]) -> Tree: ...
    def spans(self, text: str) -> NDArray[np.void]: ...
    def spans_by_atoms(self, text: str) -> NDArray[np.void]: ...
    def spans_many(
        self, texts: Sequence[str], workers: int | None = None
    ) -> list[NDArray[np.void]]: ...

@final
class Outline:
    def __new__(cls, text: str) -> Outline: ...
    @staticmethod
    def code(text: str, language: str | None = None, source: str | None = None) -> Outline: ...
    @property
    def headings(self) -> list[tuple[int, int, str]]: ...
    @property
    def language(self) -> str | None: ...
    def path(self, start_byte: int) -> list[str]: ...

def code_languages() -> list[tuple[str, list[str], list[str]]]: ...
def level_spans(splitter: Splitter, text: str, parents: NDArray[np.int64]) -> NDArray[np.int64]: ...
def char_spans_to_bytes(text: str, spans: NDArray[np.int64]) -> NDArray[np.int64]: ...
def chunk_ids(document_id: str, fingerprint: str, spans: NDArray[np.int64]) -> list[str]: ...

@final
class Chunk:
    def __new__(
        cls,
        id: str,
        text: str,
        document_id: str,
        index: int,
        level: int,
        start_char: int,
        end_char: int,
        start_byte: int,
        end_byte: int,
        parent_id: str | None = None,
        child_ids: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
    ) -> Chunk: ...
    @property
    def id(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def document_id(self) -> str: ...
    @property
    def index(self) -> int: ...
    @property
    def level(self) -> int: ...
    @property
    def start_char(self) -> int: ...
    @property
    def end_char(self) -> int: ...
    @property
    def start_byte(self) -> int: ...
    @property
    def end_byte(self) -> int: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def child_ids(self) -> tuple[str, ...]: ...
    @property
    def metadata(self) -> Mapping[str, Any]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def __reduce__(self) -> tuple[type[Chunk], tuple[Any, ...]]: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

def build_chunks(
    text: str,
    document_id: str,
    fingerprint: str,
    metadata: Mapping[str, Any] | None,
    spans: NDArray[np.int64],
    outline: Outline | None = None,
) -> list[Chunk]: ...

class JsonlBatch:
    def __len__(self) -> int: ...
    def to_bytes(self) -> bytes: ...
    def write_to(self, fd: int) -> None: ...

class ChunkSizes:
    def __init__(self) -> None: ...
    def merge(self, other: ChunkSizes) -> None: ...
    def levels(self) -> int: ...
    def count(self, level: int) -> int: ...
    def percentiles(self, level: int, shares: Sequence[float]) -> list[int]: ...

def write_documents(
    chunkers: Sequence[tuple[Sequence[Splitter], str]],
    datas: Sequence[bytes],
    sources: Sequence[str],
    format: str = "jsonl",
    parquet: ParquetEncoder | None = None,
    chunker_of: Sequence[int] | None = None,
    document_ids: Sequence[str] | None = None,
) -> tuple[JsonlBatch | ParquetGroup, list[tuple[str, str] | None], ChunkSizes]: ...
def write_files(
    chunkers: Sequence[tuple[Sequence[Splitter], str]],
    paths: Sequence[str],
    sources: Sequence[str],
    format: str = "jsonl",
    expected_bytes: int = 0,
    parquet: ParquetEncoder | None = None,
    chunker_of: Sequence[int] | None = None,
    document_ids: Sequence[str] | None = None,
) -> tuple[JsonlBatch | ParquetGroup, list[tuple[str, str] | None], ChunkSizes]: ...
def is_binary(head: bytes) -> bool: ...
def text_problem(data: bytes) -> str | None: ...

@final
class ArrowRows:
    def __arrow_c_array__(
        self, requested_schema: object | None = None
    ) -> tuple[object, object]: ...
    def __len__(self) -> int: ...

def chunk_columns(
    levels: Sequence[Splitter],
    fingerprint: str,
    data: np.ndarray,
    offsets: np.ndarray,
    document_ids: Sequence[str | None],
    sources: Sequence[str | None],
    metadata: Sequence[str],
) -> ArrowRows: ...

@final
class ParquetFile:
    def __init__(self, path: str, compression: str = "snappy") -> None: ...
    def encoder(self) -> ParquetEncoder: ...
    def append(self, group: ParquetGroup) -> None: ...
    def close(self) -> None: ...
    def discard(self) -> None: ...

@final
class ParquetEncoder: ...

@final
class ParquetGroup:
    @property
    def rows(self) -> int: ...
    def __len__(self) -> int: ...

@final
class StoreBatch:
    def __len__(self) -> int: ...
    def documents(
        self,
    ) -> list[tuple[str, list[tuple[Any, ...]], str, tuple[int, int, int, int] | None]]: ...

def cut_for_store(
    levels: Sequence[Splitter],
    datas: Sequence[bytes],
    document_ids: Sequence[str],
    fingerprint: str,
    content_hashes: Sequence[str],
    file_states: Sequence[tuple[int, int, int, int] | None],
) -> tuple[StoreBatch, list[str | None], ChunkSizes]: ...

@final
class StoreWriter:
    def __new__(
        cls,
        path: str,
        setup: str,
        insert_chunk: str,
        insert_chunks: str,
        insert_document: str,
        delete_chunks: str,
    ) -> StoreWriter: ...
    def write(self, batches: Sequence[StoreBatch]) -> None: ...
    def finish(self, sql: str) -> None: ...
    def close(self) -> None: ...

@final
class RecordedFiles:
    def __init__(
        self,
        documents: list[tuple[str, Any, int | None, int | None, int | None, int | None]],
        skipped: list[tuple[str, str, str, int, int, int, int]],
        quiet: set[str],
    ) -> None: ...
    def unchanged(self) -> tuple[int, int]: ...
    def quiet_settled(self) -> list[int]: ...
    def seen(self, path: str) -> bool: ...
    def unseen_documents(self) -> list[str]: ...
    def unsettled_skips(self) -> list[int]: ...

@final
class FileWalk:
    def __init__(
        self,
        paths: Sequence[str],
        file_class: Callable[..., Any],
        excludes: Callable[[str], bool] | None = None,
        picks: Callable[[str], bool] | None = None,
        recorded: RecordedFiles | None = None,
    ) -> None: ...
    def settle_with(self, recorded: RecordedFiles) -> None: ...
    def __iter__(self) -> FileWalk: ...
    def __next__(self) -> list[Any]: ...

def chunk_documents(
    levels: Sequence[Splitter],
    texts: Sequence[str],
    document_ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any] | None],
    fingerprint: str,
    workers: int | None = 1,
) -> list[tuple[list[Chunk], int]]: ...
def text_id(text: str) -> str: ...
def _panic_for_tests(message: str, workers: int = 0) -> None: ...

@final
class ModelShape:
    def __new__(
        cls,
        model: type,
        fields: dict[str, Any],
        id_key: str,
        text_key: str,
        metadata_key: str,
        fields_set: set[str] | None = None,
        meta_keys: Sequence[str] = (),
    ) -> ModelShape: ...
    def build(self, id: str, text: str, metadata: dict[str, Any]) -> Any: ...

_LangChainWriting = tuple[Mapping[str, Any], int | None, int, int, str | None, str | None]

def langchain_documents(
    shape: ModelShape, groups: Sequence[tuple[Sequence[Chunk], _LangChainWriting]]
) -> list[Any]: ...
def langchain_cut(
    shape: ModelShape,
    levels: Sequence[Splitter],
    fingerprint: str,
    texts: Sequence[str],
    document_ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any] | None],
    writings: Sequence[_LangChainWriting],
    leaves_only: bool,
    keep_children: bool,
) -> tuple[list[Any], list[Chunk]]: ...
def haystack_documents(
    shape: ModelShape,
    chunks: Sequence[Chunk],
    base: Mapping[str, Any],
    block_sizes: Sequence[int],
    source_id: str,
    top_parent: str | None,
    page_breaks: Sequence[int],
) -> tuple[list[Any], list[str]]: ...
def haystack_cut(
    shape: ModelShape,
    levels: Sequence[Splitter],
    fingerprint: str,
    documents: Sequence[tuple[str, str, Mapping[str, Any], str | None, Sequence[int]]],
    block_sizes: Sequence[int],
    keep_children: bool,
) -> tuple[list[tuple[list[Any], list[str]]], list[Chunk]]: ...
