"""Chunks as LangChain ``Document`` objects: the field mapping every part of the
integration writes, made in the core when it lays the documents out as LangChain's
constructor does (checked once at import), else through the constructor.

Field mapping (``Document.metadata`` keys; ``Document.id`` is the chunk id):

==================  ======================================================================
``start_index``     ``Chunk.start_char``: char offset in the source document (LangChain's
                    key, as ``add_start_index`` sets it)
``end_index``       ``Chunk.end_char``
``start_byte``      ``Chunk.start_byte`` (UTF-8)
``end_byte``        ``Chunk.end_byte``
``level``           ``Chunk.level``: 0 for the leaves, 1 for their parents, ...
``index``           ``Chunk.index``: position within its document and level
``chunk_id``        ``Chunk.id`` (also ``Document.id``)
``document_id``     ``Chunk.document_id``
``parent_id``       ``Chunk.parent_id`` (None at the top)
``child_ids``       ``list(Chunk.child_ids)`` (trees only: ``index_documents``)
``headings``        ``list(Chunk.metadata["headings"])``: a Markdown or HTML heading path
``symbols``         ``list(Chunk.metadata["symbols"])``: source code's symbol path, when asked
``language``        ``Chunk.metadata["language"]``: source code's language, with ``symbols``
``source_start_byte``, ``source_end_byte``
                    an HTML page's chunk: its byte range in the page's UTF-8 source
``table_header``    a chunk of a table with a header row: the row (``text``, ``start_char``,
                    ``end_char``, ``start_byte``, ``end_byte``), as a plain dict
``page_first``      a chunk of a text with page markers: the first page it spans
``page_last``       ... and the last
==================  ======================================================================

The last five are ``Chunk.metadata``'s, written where the chunk has them. The input
document's own metadata is copied into every chunk, as LangChain's splitters do; its own
``page_first`` (a parent split again) is the page its text starts on, which its chunks' pages
count from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from spanchunk import Chunk, Chunker, _core
from spanchunk.chunkers import hooks
from spanchunk.integrations._common import (
    CARRIED_KEYS,
    CarriedFields,
    cut_registered,
    metadata_copier,
    missing_extra,
    same_model,
    within_declared_range,
)

try:
    from langchain_core.documents import Document
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("langchain-core and langchain-text-splitters", "langchain", error) from None

__all__ = ["SPAN_KEYS", "chunk_to_document"]

# Keys the integration writes into metadata; a chunk split again (a parent given to the child
# splitter) drops its own before its children get theirs.
SPAN_KEYS = (
    "start_index", "end_index", "start_byte", "end_byte", "level", "index", "chunk_id",
    "document_id", "parent_id", "child_ids", "headings", "symbols", "language",
    "source_start_byte", "source_end_byte", "table_header", "page_first", "page_last",
)  # fmt: skip
# A document's own ``language`` is kept (PATH_KEYS), and its own pages: where a piece's
# chunks' pages count from (CarriedFields).
_SPAN_KEY_SET = frozenset(SPAN_KEYS) - {"language", "page_first", "page_last"}
_CARRIED_KEYS = frozenset(CARRIED_KEYS)

# Speed: benches/NOTES.md, under python/spanchunk/integrations/langchain/.
# The core makes these Documents as ``model_construct`` does (``rust/py/frameworks/``); the
# shortcut is checked once at import against the constructor's (``_same_langchain_layout``), and the
# constructor is used whenever they differ.
_FIELDS_SET = frozenset({"id", "metadata", "page_content"})
_SHAPE = _core.ModelShape(
    Document,
    {"id": None, "metadata": None, "page_content": None, "type": "Document"},
    "id",
    "page_content",
    "metadata",
    set(_FIELDS_SET),
    SPAN_KEYS,
)

# One document's chunks and how to write them: the chunks, the metadata they copy, the
# level to write instead of Chunk.level, the char and byte offsets of the text in its
# source, and the document id and parent id to write instead of the chunks' own.
_Group = tuple[Sequence[Chunk], Mapping[str, Any], int | None, int, int, str | None, str | None]


def _own_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """The caller's metadata of a document, without the span keys a splitter wrote."""
    span_keys = _SPAN_KEY_SET
    return {key: value for key, value in metadata.items() if key not in span_keys}


def _constructed_documents(group: _Group) -> list[Document]:
    """The documents of one group through LangChain's constructor (the reference path)."""
    chunks, base, level, char_offset, byte_offset, document_id, parent_id = group
    copier = metadata_copier(base)  # LangChain deep-copies per chunk
    carried = CarriedFields(base, char_offset, byte_offset)
    out: list[Document] = []
    for chunk in chunks:
        # The document's metadata, then the span keys in their order (a key already in the
        # metadata keeps its place and takes the chunk's value).
        fields = {
            **copier(base),
            "start_index": chunk.start_char + char_offset,
            "end_index": chunk.end_char + char_offset,
            "start_byte": chunk.start_byte + byte_offset,
            "end_byte": chunk.end_byte + byte_offset,
            "level": chunk.level if level is None else level,
            "index": chunk.index,
            "chunk_id": chunk.id,
            "document_id": chunk.document_id if document_id is None else document_id,
            "parent_id": chunk.parent_id if parent_id is None else parent_id,
        }
        if chunk.child_ids:
            fields["child_ids"] = list(chunk.child_ids)
        fields.update(carried.of(chunk.metadata))
        out.append(Document(page_content=chunk.text, metadata=fields, id=chunk.id))
    return out


def _built_documents(groups: Sequence[_Group], shape: Any = _SHAPE) -> list[Document]:
    """The documents of every group, in order, made in the core."""
    return _core.langchain_documents(shape, [(group[0], group[1:]) for group in groups])


def _constructed_groups(groups: Sequence[_Group]) -> list[Document]:
    """The documents of every group, in order, through the constructor."""
    out: list[Document] = []
    for group in groups:
        out.extend(_constructed_documents(group))
    return out


def _same_langchain_layout(shape: Any = _SHAPE) -> bool:
    """Whether the core's documents (made by ``shape``) are the constructor's, on probes of
    every key, shallow and deep-copied metadata, and the splitter's overrides."""
    try:
        parent = Chunk("p1", "probe text", "doc", 0, 1, 0, 10, 0, 10, None, ("c1",))
        child = Chunk("c1", "probe", "doc", 0, 0, 0, 5, 0, 5, "p1", (), {"headings": ("H",)})
        code = Chunk("c2", "code", "doc", 1, 0, 5, 9, 5, 9, None, (), {"symbols": ("S",)})
        header = {"text": "A", "start_char": 0, "end_char": 1, "start_byte": 0, "end_byte": 1}
        own = {"source_start_byte": 4, "source_end_byte": 9, "table_header": header}
        pages = {"page_first": 3, "page_last": 4}
        page = Chunk("c3", "row", "doc", 2, 0, 2, 5, 2, 5, None, (), {**own, **pages})
        groups: list[_Group] = [
            ([parent, child], {"key": 1, "level": "stale"}, None, 0, 0, None, None),
            ([child, child], {"tags": ["a"]}, 0, 3, 4, "source", "parent"),
            ([code], {"key": 2}, None, 0, 0, None, None),
            ([page, page], {"page_first": 7}, 0, 3, 4, "source", "parent"),
            ([page], {}, None, 0, 0, None, None),
        ]
        built, expected = _built_documents(groups, shape), _constructed_groups(groups)
        return (
            len(built) == len(expected)
            and all(
                same_model(reference, filled)
                and list(reference.metadata.items()) == list(filled.metadata.items())
                for reference, filled in zip(expected, built, strict=True)
            )
            and built[2].metadata["tags"] is not built[3].metadata["tags"]
            and (built[5].metadata["page_first"], built[5].metadata["page_last"]) == (7, 8)
            and built[5].metadata["table_header"]["start_char"] == 3
            and built[5].metadata["table_header"] is not built[6].metadata["table_header"]
            and type(built[7].metadata["table_header"]) is dict
        )
    except Exception:  # any surprise: keep the constructor
        return False


def _langchain_shortcut() -> bool:
    """Whether the core fills the Documents: for a declared langchain-core whose Documents it
    fills as the constructor builds them."""
    return within_declared_range("langchain-core", "langchain") and _same_langchain_layout()


_FAST = _langchain_shortcut()


def _cut(
    chunker: Chunker,
    texts: Sequence[str],
    ids: Sequence[str | None],
    metadatas: Sequence[Mapping[str, Any] | None],
    writings: Sequence[tuple[Mapping[str, Any], int | None, int, int, str | None, str | None]],
    *,
    leaves_only: bool,
) -> list[Document]:
    """The documents of texts cut and written in one core call (see ``hooks.cuts_in_core``); the
    chunks above the leaves go to the chunker's registry, as ``chunk_tree`` sends them."""
    documents: list[Document] = cut_registered(
        chunker,
        _core.langchain_cut,
        _SHAPE,
        hooks.levels(chunker),
        chunker.fingerprint(),
        texts,
        ids,
        metadatas,
        writings,
        leaves_only,
    )
    return documents


def _cuts_in_core(chunker: Chunker, method: str) -> bool:
    """Whether the documents of ``chunker.<method>`` are cut and written in one core call
    (``_cut``): the core fills the Documents, and ``hooks.cuts_in_core``."""
    return _FAST and hooks.cuts_in_core(chunker, method)


def _documents_of(groups: Sequence[_Group]) -> list[Document]:
    """The LangChain documents of every group, in order (see the field mapping above).

    Each group's metadata is copied into each of its documents (shallowly when all its
    values are scalars, else deeply, as LangChain's splitters copy it).
    """
    return _built_documents(groups) if _FAST else _constructed_groups(groups)


def chunk_to_document(chunk: Chunk, metadata: Mapping[str, Any] | None = None) -> Document:
    """The LangChain ``Document`` of one chunk (see the field mapping above).

    Args:
        chunk: A spanchunk chunk.
        metadata: Metadata to copy into the document (the source document's); None: the
            chunk's own metadata (its document's, plus ``source``), what it carries under
            its own keys.

    Returns:
        A ``langchain_core.documents.Document`` whose ``id`` is the chunk id.
    """
    if metadata is None:
        metadata = {key: value for key, value in chunk.metadata.items() if key not in _CARRIED_KEYS}
    return _documents_of([([chunk], metadata, None, 0, 0, None, None)])[0]
