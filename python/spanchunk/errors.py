"""Exceptions and warnings raised by spanchunk."""

from __future__ import annotations

__all__ = ["ChunkingError", "MissingParentError", "MissingParentWarning", "SkippedDocumentWarning"]


class ChunkingError(Exception):
    """A chunking strategy produced output that breaks the chunking contract.

    Raised when a custom strategy's ``split_text`` returns a piece that is not in the text, or
    its ``split_spans`` returns spans outside the text or out of order.

    Example:
        >>> from spanchunk import Chunker, ChunkingError
        >>> class Bad(Chunker):
        ...     def split_text(self, text):
        ...         return ["not in the text"]
        >>> try:
        ...     Bad().chunk("hello")
        ... except ChunkingError as error:
        ...     print("refused")
        refused
    """


class SkippedDocumentWarning(UserWarning):
    """``chunk_many(..., errors="skip")`` skipped a document it could not chunk.

    The message names the document's position in the input and the reason; the other
    documents are chunked as usual.

    Example:
        >>> import warnings
        >>> from spanchunk import RecursiveChunker, SkippedDocumentWarning
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     chunks = RecursiveChunker(100).chunk_many(["fine", 42], errors="skip")
        >>> [chunk.text for chunk in chunks], caught[0].category is SkippedDocumentWarning
        (['fine'], True)
    """


class MissingParentWarning(UserWarning):
    """``expand`` (or ``auto_merge``, ``assemble``) met hits whose parent the store does not hold.

    Emitted once per call, with the number of such hits, one of the missing parent ids, the
    likely cause (the hits were cut with other settings or filled another store, or their
    document was deleted) and the fix. The hits are kept as themselves, as before. Pass
    ``missing="raise"`` to get a ``MissingParentError`` instead, or ``missing="keep"`` to
    keep such hits without a warning. A hit that carries its parent in
    ``metadata["parent_content"]`` is not missing, nor is a top-level hit.

    Example:
        >>> import warnings
        >>> from spanchunk import MissingParentWarning, ParentChildChunker, ParentRegistry
        >>> children = ParentChildChunker(200, 50).chunk("One sentence here. " * 40)
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     kept = ParentRegistry().expand(children[:2])
        >>> kept == children[:2], caught[0].category is MissingParentWarning
        (True, True)
    """


class MissingParentError(KeyError):
    """``expand(..., missing="raise")`` (or ``auto_merge``, ``assemble``) met a hit whose
    parent the store does not hold.

    A ``KeyError`` (the parent id is the key not found); the message names how many hits,
    one parent id, the likely cause and the fix.

    Attributes:
        parent_id: One of the parent ids the store does not hold.
        count: How many hits had a parent the store does not hold.
    """

    def __init__(self, message: str, parent_id: str, count: int) -> None:
        super().__init__(message)
        self.parent_id = parent_id
        self.count = count

    def __str__(self) -> str:
        # KeyError quotes its argument (repr); the message reads better as it is.
        return str(self.args[0])


def encoding_error(error: UnicodeEncodeError, what: str = "text") -> ValueError:
    """The friendly ValueError for text the core could not encode as UTF-8.

    The core refuses lone surrogates (the only str content UTF-8 cannot represent) while
    converting its argument; the exception carries the offending string and position.
    """
    position = error.start
    try:
        character = repr(error.object[position])
    except (IndexError, TypeError):  # pragma: no cover - a UnicodeEncodeError always has both
        character = "a surrogate"
    return ValueError(
        f"{what} cannot be encoded as UTF-8: lone surrogate {character} at position {position}; "
        "replace lone surrogates first, e.g. "
        "text = text.encode('utf-8', errors='replace').decode('utf-8') "
        "(each becomes '?', so offsets are unchanged)"
    )
