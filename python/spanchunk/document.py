"""The input of every chunker: a text with an id, metadata and an optional source."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from spanchunk import _core
from spanchunk.errors import _encoding_error

__all__ = ["Document"]

_EMPTY_METADATA: Mapping[str, Any] = MappingProxyType({})


def _text_type_error(text: object, what: str = "text", expected: str = "a str") -> TypeError:
    """The TypeError for a text that is not a str, naming its type and the fix."""
    kind = type(text).__name__
    if isinstance(text, (bytes, bytearray, memoryview)):
        fix = "decode it first: data.decode('utf-8')"
    elif isinstance(text, os.PathLike):
        fix = "read the file first: pathlib.Path(path).read_text(encoding='utf-8')"
    elif text is None:
        fix = "pass a str (an empty document is '')"
    else:
        fix = "pass a str"
    return TypeError(f"{what} must be {expected}, not {kind}: {fix}")


class Document:
    """A text to chunk, with an id, metadata and an optional source.

    Documents are immutable and picklable. Every chunk cut from a document carries its id
    (``Chunk.document_id``) and its metadata, plus ``"source"`` when the document has one.

    Args:
        text: The text, a ``str`` (bytes must be decoded first).
        id: A stable id for the document. Defaults to a hash of the text (16 hex digits),
            so the same text always gets the same id.
        metadata: A mapping copied into the document and shared, read-only, by its chunks.
        source: Where the text came from (a path or a URL); chunks get it as
            ``metadata["source"]``.

    Raises:
        TypeError: ``text`` is not a ``str``, ``id`` or ``source`` is not a ``str``, or
            ``metadata`` is not a mapping.
        ValueError: ``text`` (or ``id``) cannot be encoded as UTF-8 (a lone surrogate).

    Example:
        >>> from spanchunk import Document
        >>> doc = Document("Call me Ishmael.", metadata={"book": "Moby Dick"})
        >>> len(doc.id), doc.metadata["book"]
        (16, 'Moby Dick')
        >>> Document("Call me Ishmael.").id == doc.id
        True
    """

    __slots__ = ("id", "metadata", "source", "text")

    text: str
    id: str
    metadata: Mapping[str, Any]
    source: str | None

    def __init__(
        self,
        text: str,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        source: str | os.PathLike[str] | None = None,
    ) -> None:
        if not isinstance(text, str):
            raise _text_type_error(text)
        if id is None:
            try:
                id = _core.text_id(text)
            except UnicodeEncodeError as error:
                raise _encoding_error(error) from None
        else:
            id = _check_id(id)
        if metadata is None:
            frozen = _EMPTY_METADATA
        elif isinstance(metadata, Mapping):
            frozen = MappingProxyType(dict(metadata))
        else:
            raise TypeError(
                f"metadata must be a mapping such as a dict, not {type(metadata).__name__}: "
                "pass metadata={'key': value} or None"
            )
        if source is not None:
            if isinstance(source, os.PathLike):
                source = os.fspath(source)
            if not isinstance(source, str):
                raise TypeError(
                    f"source must be a str (a path or a URL) or None, not {type(source).__name__}"
                )
        setattr_ = object.__setattr__
        setattr_(self, "text", text)
        setattr_(self, "id", id)
        setattr_(self, "metadata", frozen)
        setattr_(self, "source", source)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"Document is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Document is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[type[Document], tuple[str, str, dict[str, Any], str | None]]:
        # MappingProxyType does not pickle: send a plain dict and let __init__ freeze it again.
        return (Document, (self.text, self.id, dict(self.metadata), self.source))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Document):
            return NotImplemented
        return (
            self.id == other.id
            and self.text == other.text
            and self.source == other.source
            and self.metadata == other.metadata
        )

    def __hash__(self) -> int:
        return hash((self.id, self.text))

    def __repr__(self) -> str:
        preview = self.text if len(self.text) <= 40 else self.text[:37] + "..."
        source = f", source={self.source!r}" if self.source is not None else ""
        return f"Document(id={self.id!r}, chars={len(self.text)}{source}, text={preview!r})"

    def _chunk_metadata(self) -> Mapping[str, Any]:
        """The read-only metadata every chunk of this document shares.

        The document's metadata plus ``"source"`` when the document has one (the ``source``
        argument wins over a ``"source"`` key in ``metadata``).
        """
        if self.source is None:
            return self.metadata
        return MappingProxyType({**self.metadata, "source": self.source})


def _check_id(id: object) -> str:
    """A document id given by the caller: a non-empty str that UTF-8 can encode."""
    if not isinstance(id, str):
        raise TypeError(
            f"document id must be a str or None, not {type(id).__name__}: pass id=str(value)"
        )
    if not id:
        raise ValueError("document id cannot be empty: pass a non-empty str, or None for a hash")
    try:
        id.encode("utf-8")
    except UnicodeEncodeError as error:
        raise _encoding_error(error, "document id") from None
    return id


def _as_document(item: object, what: str = "document") -> Document:
    """A Document from a Document or a str; TypeError naming the fix for anything else."""
    if isinstance(item, Document):
        return item
    if isinstance(item, str):
        return Document(item)
    raise _text_type_error(item, what, "a str or a spanchunk.Document")
