# Signatures of the private Rust extension. Docstrings live in the public Python modules, except
# Chunk's, which is the `///` comment on PyChunk in rust/py.rs (spanchunk.Chunk is this class).
#
# Conventions shared by every function:
# - offsets are int64, relative to the whole document, byte offsets into text.encode("utf-8"),
#   char offsets in code points (Python's len);
# - text that cannot be UTF-8 encoded (a lone surrogate) raises UnicodeEncodeError from the
#   argument conversion; the Python layer turns it into a ValueError with the position;
# - the GIL is released for every pass over the text.
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, final

import numpy as np
from numpy.typing import NDArray

__version__: str

SPAN_COLUMNS: tuple[str, ...]
"""("level", "index", "parent", "start_byte", "end_byte", "start_char", "end_char")"""

class Splitter:
    """One level of the recursive splitting engine; settings are validated on construction
    (ValueError naming the setting and the fix)."""

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
        encoding: str | None = None,
        tokenizer_json: str | None = None,
        length_function: Callable[[str], int] | None = None,
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
    def seekable(self) -> bool:
        """Whether a tree of such levels finds its chunks by seeking (sizes in chars, trim, no
        overlap, no min_chunk_size, plain text, keep_separator not "start", separators that
        cannot overlap or are all whitespace) rather than from atoms; the output is the same."""
    def split(self, text: str) -> NDArray[np.int64]:
        """(n, 4): start_byte, end_byte, start_char, end_char of each chunk of text."""

def default_separators() -> list[list[str]]: ...
def forget_token_counts() -> None:
    """Drop the token counts kept per tokenizer, so the next chunking starts cold."""

@final
class Tree:
    """A chunker's levels, top first, held by the core. levels[0] cuts the document (the top
    level, numbered len(levels) - 1); each following splitter cuts inside every span of the one
    before; the last is level 0. Raises ValueError for no levels, or an upper level with an
    overlap."""

    def __new__(cls, levels: Sequence[Splitter]) -> Tree: ...
    def spans(self, text: str) -> NDArray[np.void]:
        """A structured array, one row per chunk, int64 fields named SPAN_COLUMNS. Rows: the
        top level first, then each lower level, each in document order; `parent` is the
        `index` of the parent row in the level above (-1 at the top)."""

    def spans_by_atoms(self, text: str) -> NDArray[np.void]:
        """spans by the atom engine alone, never by seeking: the reference seeking is tested
        against."""

    def spans_many(
        self, texts: Sequence[str], workers: int | None = None
    ) -> list[NDArray[np.void]]:
        """spans of each text, computed in parallel on `workers` threads (None: all cores)."""

@final
class Outline:
    """A Markdown document's structure, parsed once (pulldown-cmark): its top-level headings."""

    def __new__(cls, text: str) -> Outline: ...
    @property
    def headings(self) -> list[tuple[int, int, str]]:
        """(start_byte of the heading's line, level 1-6, plain text) of every heading."""
    def path(self, start_byte: int) -> list[str]:
        """The plain texts of the headings enclosing a chunk that starts at start_byte."""

def level_spans(splitter: Splitter, text: str, parents: NDArray[np.int64]) -> NDArray[np.int64]:
    """Cut inside each parent byte span. parents: (m, 2) int64 start_byte, end_byte.
    Returns (n, 5): parent (row in `parents`), start_byte, end_byte, start_char, end_char."""

def char_spans_to_bytes(text: str, spans: NDArray[np.int64]) -> NDArray[np.int64]:
    """(n, 2) char spans -> (n, 2) byte spans; ValueError when a span is out of range or
    reversed."""

def chunk_ids(document_id: str, fingerprint: str, spans: NDArray[np.int64]) -> list[str]:
    """16-hex-digit id of every row of a (n, 7) span array: xxh3-64 of (document id, level,
    start_byte, end_byte, fingerprint)."""

@final
class Chunk:
    """Frozen: setting an attribute raises AttributeError. Hashable, picklable."""

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
) -> list[Chunk]:
    """Chunk objects for every row of a (n, 7) span array (Tree.spans viewed as int64), in row
    order: ids as chunk_ids gives them, texts sliced from `text`, parent ids and child-id
    tuples linked through the `parent` column, `metadata` frozen once and shared by every
    chunk (with an `outline`: one mapping per heading path, `metadata` plus "headings").
    ValueError when a row is malformed (negative, reversed, past the end of the text,
    levels out of order, a parent that is not a row of the level above)."""

def write_documents(
    levels: Sequence[Splitter],
    datas: Sequence[bytes],
    sources: Sequence[str],
    fingerprint: str,
    format: str = "jsonl",
) -> tuple[bytes | dict[str, Any], list[str | None], NDArray[np.int64], NDArray[np.int64]]:
    """The command line's writer: every file's bytes checked as UTF-8, cut into levels and
    written as `format` ("jsonl": the JSON Lines bytes of every chunk, in order; "columns":
    Arrow-ready buffers, see rust/output/columns.rs), GIL released. Returns that, each
    document's error (None: written), and the level and char length of every chunk."""

def chunk_documents(
    levels: Sequence[Splitter],
    texts: Sequence[str],
    document_ids: Sequence[str],
    metadatas: Sequence[Mapping[str, Any] | None],
    fingerprint: str,
    workers: int | None = 1,
) -> list[tuple[list[Chunk], int]]:
    """Every level of every text as Chunk objects, as build_chunks(Tree(levels).spans(...))
    gives them, with no span array in between: spans, outlines and ids computed with the GIL
    released on `workers` threads (1: this thread, None: every core). Returns, per text, its
    chunks and the row of its first leaf."""

def text_id(text: str) -> str:
    """16 hex digits: xxh3-64 of the UTF-8 text (the default Document id)."""
