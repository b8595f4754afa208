"""The input of every chunker: a text with an id, metadata and an optional source."""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from spanchunk import _core
from spanchunk.errors import encoding_error

__all__ = ["Document", "FrozenDict", "freeze_metadata", "thaw_metadata"]

_EMPTY_METADATA: Mapping[str, Any] = MappingProxyType({})


class FrozenDict(dict):  # type: ignore[type-arg]
    """A read-only dict: the form a nested mapping takes inside a document's metadata.

    A subclass of ``dict`` so that ``json``, orjson, pyarrow and pickle take it as a dict; every
    method that would change it raises ``TypeError``. Built by ``freeze_metadata``.
    """

    __slots__ = ()

    def _read_only(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError(
            "chunk and document metadata is read-only: copy it first, e.g. "
            "thaw_metadata(chunk.metadata), and change the copy"
        )

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self) -> tuple[type[FrozenDict], tuple[dict[Any, Any]]]:
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


def _freeze(value: object) -> object:
    if isinstance(value, Mapping):
        return FrozenDict({key: _freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(item) for item in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(value)
    return value


def freeze_metadata(metadata: Mapping[str, Any]) -> Mapping[str, Any]:
    """A deep, read-only copy of ``metadata``: the form documents and chunks hold.

    The top level becomes a ``types.MappingProxyType``; nested mappings become ``FrozenDict``,
    lists and tuples become tuples, sets frozensets. Other values (str, numbers, None, your own
    objects) are kept as they are: an object of your own that can change is yours to keep
    unchanged. Freezing happens once per document (chunks share the document's frozen
    metadata), so it costs nothing per chunk.

    Example:
        >>> frozen = freeze_metadata({"authors": ["ada"]})
        >>> frozen["authors"]
        ('ada',)
    """
    return MappingProxyType({key: _freeze(value) for key, value in metadata.items()})


def _thaw(value: object) -> object:
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    if isinstance(value, frozenset):
        return set(value)
    return value


def thaw_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A plain, mutable deep copy of frozen metadata (dicts, lists and sets again).

    Example:
        >>> thaw_metadata(freeze_metadata({"authors": ["ada"]}))
        {'authors': ['ada']}
    """
    return {key: _thaw(value) for key, value in metadata.items()}


_READ_DOCUMENT = "(from spanchunk.ingest import read_document)"


def _framework(value: object) -> str | None:
    """The framework whose document ``value`` is ("langchain", "llama_index", "haystack"),
    by its class's module and fields (never by importing the framework), or None."""
    for cls in type(value).__mro__:
        module = cls.__module__ or ""
        if module.startswith("llama_index"):
            return "llama_index"
        if module.startswith("haystack"):
            return "haystack"
        if module.startswith("langchain"):
            return "langchain"
    if isinstance(getattr(value, "page_content", None), str) and hasattr(value, "metadata"):
        return "langchain"  # a LangChain-style document from a package of its own
    return None


# Per framework: its name, and the integration to use instead ({use}: the call to name).
_FRAMEWORK_FIXES = {
    "langchain": (
        "LangChain",
        "split LangChain documents with SpanchunkTextSplitter(...).split_documents(documents), "
        "or get every level with tree_documents(documents, chunker) (from "
        "spanchunk.integrations.langchain import SpanchunkTextSplitter, tree_documents); or "
        "pass its text: {use}(document.page_content)",
    ),
    "llama_index": (
        "LlamaIndex",
        "parse LlamaIndex documents with SpanchunkNodeParser(...).get_nodes_from_documents("
        "documents) (from spanchunk.integrations.llamaindex import SpanchunkNodeParser); or "
        "pass its text: {use}(document.text)",
    ),
    "haystack": (
        "Haystack",
        "split Haystack documents with SpanchunkDocumentSplitter(...).run(documents) (from "
        "spanchunk.integrations.haystack import SpanchunkDocumentSplitter); or pass its text: "
        "{use}(document.content)",
    ),
}


def misuse_of(value: object, call: str | None) -> tuple[str, str] | None:
    """What a value passed by mistake is (a file, a path, bytes, another framework's
    document) and what to pass instead; None for any other value.

    ``call`` is the chunker method to name in the fix (``"chunk"``); None: the ``Document``
    constructor.
    """
    name = type(value).__name__
    use = f"chunker.{call}" if call else "Document"
    # chunk_text takes a str only: a Document read from a file goes to chunk.
    reader = "chunker.chunk" if call == "chunk_text" else use
    read = (
        f"{reader}(read_document(path)) {_READ_DOCUMENT}"
        if call
        else f"read_document(path), which gives the Document {_READ_DOCUMENT}"
    )
    framework = _framework(value)
    if framework is not None:
        label, fix = _FRAMEWORK_FIXES[framework]
        return (f"a {label} {name}", fix.format(use=use))
    if isinstance(value, (bytes, bytearray, memoryview)):
        decoded = "bytes(data)" if isinstance(value, memoryview) else "data"
        return (
            name,
            f"decode it first, {use}({decoded}.decode('utf-8')), or read the file as the "
            f"command line does: {read}",
        )
    if isinstance(value, os.PathLike):
        return (f"a path ({name})", f"read the file first, as the command line does: {read}")
    if isinstance(value, io.IOBase) or callable(getattr(value, "read", None)):
        return (
            f"an open file ({name})",
            f"pass its text, {use}(file.read()), or read the file as the command line does: {read}",
        )
    return None


def text_type_error(
    text: object, what: str = "text", expected: str = "a str", call: str | None = None
) -> TypeError:
    """The TypeError for a text that is not a str, naming its type and the fix.

    Args:
        text: The value refused.
        what: The argument (``"documents"``) or the item (``"documents[2]"``) it was.
        expected: What the argument takes.
        call: The chunker method called (``"chunk"``), to name in the message and the fix;
            None: the ``Document`` constructor.
    """
    misused = misuse_of(text, call)
    if misused is not None:
        kind, fix = misused
        if call is None:
            return TypeError(f"{what} must be {expected}, not {kind}: {fix}")
        if what.endswith("]"):  # an item of a list
            return TypeError(f"{call}(): {what} must be {expected}, not {kind}: {fix}")
        return TypeError(f"{call}() takes {expected}, not {kind}: {fix}")
    kind = type(text).__name__
    fix = "pass a str (an empty document is '')" if text is None else "pass a str"
    return TypeError(f"{what} must be {expected}, not {kind}: {fix}")


class Document:
    """A text to chunk, with an id, metadata and an optional source.

    Documents are immutable and picklable. Every chunk cut from a document carries its id
    (``Chunk.document_id``) and its metadata, plus ``"source"`` when the document has one.

    Args:
        text: The text, a ``str`` (bytes must be decoded first).
        id: A stable id for the document. Defaults to a hash of the text (16 hex digits),
            so the same text always gets the same id.
        metadata: A mapping deep-copied into the document in read-only form (nested
            mappings become read-only dicts, lists become tuples: see ``freeze_metadata``)
            and shared by its chunks, so no chunk can change another's metadata.
        source: Where the text came from (a path or a URL); chunks get it as
            ``metadata["source"]``. Given with a different ``metadata["source"]``, it is
            refused (ValueError): pass one of the two.

    Raises:
        TypeError: ``text`` is not a ``str``, ``id`` or ``source`` is not a ``str``, or
            ``metadata`` is not a mapping.
        ValueError: ``text`` (or ``id``) cannot be encoded as UTF-8 (a lone surrogate), or
            ``source`` and ``metadata["source"]`` disagree.

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
            raise text_type_error(text)
        if id is None:
            try:
                id = _core.text_id(text)
            except UnicodeEncodeError as error:
                raise encoding_error(error) from None
        else:
            id = check_id(id)
        if metadata is None:
            frozen = _EMPTY_METADATA
        elif isinstance(metadata, Mapping):
            frozen = freeze_metadata(metadata)
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
            given = frozen.get("source", source)
            if given != source:
                raise ValueError(
                    f"source={source!r} disagrees with metadata['source']={given!r}: pass the "
                    "source once, either as source= or in metadata"
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
        return (Document, (self.text, self.id, thaw_metadata(self.metadata), self.source))

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

    def chunk_metadata(self) -> Mapping[str, Any]:
        """The read-only metadata every chunk of this document shares.

        The document's metadata plus ``"source"`` when the document has one (the ``source``
        argument and a ``"source"`` key in ``metadata`` agree: ``__init__`` checks it).
        """
        if self.source is None:
            return self.metadata
        return MappingProxyType({**self.metadata, "source": self.source})


def check_id(id: object) -> str:
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
        raise encoding_error(error, "document id") from None
    return id


def as_document(item: object, what: str = "document", call: str | None = None) -> Document:
    """A Document from a Document or a str; TypeError naming the fix for anything else
    (``call``: the chunker method to name, see ``text_type_error``)."""
    if isinstance(item, Document):
        return item
    if isinstance(item, str):
        return Document(item)
    raise text_type_error(item, what, "a str or a spanchunk.Document", call)
