"""The inputs of every chunker: documents and texts, checked with messages that name the
position and the fix, and a batch as the columns the core takes.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from spanchunk import _core
from spanchunk.document import Document, as_document, misuse_of, text_type_error
from spanchunk.errors import SkippedDocumentWarning, encoding_error

__all__ = [
    "Checked",
    "Documents",
    "checked_document",
    "columns",
    "documents_of",
    "items_of",
    "numbered_documents",
    "text_of",
    "warn_skipped",
]

Documents = Document | str | Iterable[Document | str]
"""What ``chunk`` accepts: one document or text, or an iterable of them."""


def refuse_misused(values: object, what: str, call: str) -> None:
    """TypeError for an argument passed by mistake where documents or texts go: an open file
    (iterating it would chunk every line as a document), a path, bytes, or another
    framework's document; the message names what to call instead."""
    if misuse_of(values, call) is not None:
        raise text_type_error(values, what, "a str, a spanchunk.Document or a list of them", call)


def items_of(values: object, what: str, call: str = "chunk") -> list[object]:
    """The items of an iterable argument; TypeError for non-iterables and for mappings, and
    for the inputs passed by mistake (see ``refuse_misused``)."""
    if isinstance(values, (Document, str)):
        return [values]
    if isinstance(values, (list, tuple)):
        return list(values)
    refuse_misused(values, what, call)
    if isinstance(values, Mapping) or not isinstance(values, Iterable):
        raise TypeError(
            f"{what} must be a str, a spanchunk.Document or a list of them, "
            f"not {type(values).__name__}"
        )
    return list(values)


def documents_of(values: object, call: str = "chunk") -> list[Document]:
    return [
        as_document(item, f"documents[{position}]", call)
        for position, item in enumerate(items_of(values, "documents", call))
    ]


def text_of(value: object, what: str, call: str | None = None) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Document):
        return value.text
    raise text_type_error(value, what, "a str or a spanchunk.Document", call)


def checked_document(position: int, item: object) -> Document:
    """A Document for chunk_many, checked for encodability; errors name the position."""
    if isinstance(item, Document):
        try:
            _core.text_id(item.text)
        except UnicodeEncodeError as error:
            raise encoding_error(error, f"documents[{position}] text") from None
        return item
    if isinstance(item, str):
        try:
            return Document(item)
        except ValueError as error:
            raise ValueError(f"documents[{position}]: {error}") from None
    raise text_type_error(
        item, f"documents[{position}]", "a str or a spanchunk.Document", "chunk_many"
    )


class Checked(NamedTuple):
    """Documents ``chunk_many`` has checked, with their positions in its input. With
    ``skip``, a document a custom level fails on is reported by position and skipped."""

    documents: list[Document]
    positions: list[int]
    skip: bool


def columns(
    documents: Documents | Checked, call: str = "chunk"
) -> tuple[list[str], list[str | None], list[Mapping[str, Any] | None]]:
    """The texts, ids and chunk metadata of a batch, as the core takes them (an id of None:
    the text's hash, as ``Document`` gives it); ``call`` names the method in errors."""
    if isinstance(documents, str):
        # One text, the commonest call: no Document object, the core hashes its id.
        return [documents], [None], [None]
    batch = documents.documents if isinstance(documents, Checked) else documents_of(documents, call)
    return (
        [document.text for document in batch],
        [document.id for document in batch],
        [document.chunk_metadata() for document in batch],
    )


def numbered_documents(
    documents: Documents | Checked, call: str = "chunk"
) -> tuple[Iterable[tuple[int, Document]], bool]:
    """The documents with their input positions, and whether a failing one is skipped."""
    if isinstance(documents, Checked):
        return zip(documents.positions, documents.documents, strict=True), documents.skip
    return enumerate(documents_of(documents, call)), False


def warn_skipped(position: int, error: BaseException, stacklevel: int) -> None:
    """Warns that ``chunk_many`` skipped a document (``stacklevel``: its caller's frame)."""
    warnings.warn(
        f"chunk_many skipped document {position} ({type(error).__name__}): {error}",
        SkippedDocumentWarning,
        stacklevel=stacklevel + 1,
    )
