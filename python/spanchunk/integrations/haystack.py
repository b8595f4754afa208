"""Haystack: a hierarchical splitter component for ``AutoMergingRetriever``, with exact offsets.

``SpanchunkDocumentSplitter`` is a drop-in for Haystack's ``HierarchicalDocumentSplitter``:
its documents carry the same meta fields with the same conventions, so Haystack's
``AutoMergingRetriever`` merges them, but

- ids are spanchunk's chunk ids (a hash of the document id, the level, the chunk's text and
  the settings): two identical paragraphs get different ids (Haystack hashes the content and
  meta, so identical splits collide and a document store keeps one of them);
- ``split_idx_start`` is the offset in the *original* document (Haystack's is relative to
  the block the split was cut from), and ``split_idx_end`` and byte offsets come with it;
- every level is cut in one pass, in the Rust core, with sizes in chars, bytes or tokens.

Field mapping (``Document.meta``; ``Document.id`` is ``Chunk.id``, the root keeps its id):

=====================  ==================================================================
``__level``            Haystack's depth: 0 for the root (the original document), 1 for
                       the top chunks, ... the leaves deepest (spanchunk counts the
                       other way: ``__level`` = number of levels - ``Chunk.level``)
``__block_size``       the size of the chunk's level (0 for the root)
``__parent_id``        ``Chunk.parent_id``; the root's id for the top chunks; None for
                       the root
``__children_ids``     ``list(Chunk.child_ids)``; the top chunks' ids for the root
``source_id``          the original document's id
``split_id``           ``Chunk.index`` (position within its document and level)
``split_idx_start``    ``Chunk.start_char``, in the original document
``split_idx_end``      ``Chunk.end_char``
``start_byte``         ``Chunk.start_byte`` (UTF-8)
``end_byte``           ``Chunk.end_byte``
``page_number``        the page the chunk starts on, counting form feeds, as Haystack does
``headings``           the heading path (``markdown=True``, ``html=True``)
``symbols``            source code's symbol path (a ``CodeChunker`` level)
``language``           source code's language, with ``symbols``
``source_start_byte``  an HTML page's chunk (``html=True``): its byte range in the page's
``source_end_byte``    UTF-8 source
``table_header``       a chunk of a table with a header row: the row (``text``,
                       ``start_char``, ``end_char``, ``start_byte``, ``end_byte``), a dict
``page_first``         a chunk of a text with page markers (form feeds, page comments, ...):
``page_last``          the first and last page it spans
``_split_overlap``     leaves only, when ``split_overlap`` > 0: Haystack's format
=====================  ==================================================================

The last five are ``Chunk.metadata``'s, written where the chunk has them. The original
document's meta is copied into every chunk; its own ``page_first`` (a document that is part
of a larger one) is the page its text starts on, which its chunks' pages count from.

With ``html=True`` each document is an HTML page: the chunks are its readable text, which
``split_idx_start`` / ``split_idx_end`` and the byte offsets index (``HtmlChunker.read`` gives
it), and ``source_start_byte`` / ``source_end_byte`` locate each chunk in the page's source.

Example:
    >>> from haystack import Document
    >>> splitter = SpanchunkDocumentSplitter(block_sizes=[200, 50])
    >>> docs = splitter.run([Document(content="Twice the same. " * 30)])["documents"]
    >>> [d.meta["__level"] for d in docs][:3], len({d.id for d in docs}) == len(docs)
    ([0, 1, 1], True)
"""

from __future__ import annotations

import asyncio
import bisect
import copy
from collections.abc import Iterable
from dataclasses import fields, replace
from typing import Any

from spanchunk import Chunk, HierarchicalChunker, HtmlChunker, _core
from spanchunk import Document as SpanDocument
from spanchunk.chunkers import hooks
from spanchunk.document import check_id
from spanchunk.integrations._common import (
    OWN_KEYS,
    CarriedFields,
    PageNumbers,
    cut_registered,
    hierarchical_chunker,
    is_shallow,
    metadata_copier,
    missing_extra,
    within_declared_range,
)
from spanchunk.units import Unit

try:
    from haystack import Document, component, default_from_dict, default_to_dict
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("haystack-ai", "haystack", error) from None

__all__ = ["SpanchunkDocumentSplitter"]

# Speed: benches/NOTES.md, under python/spanchunk/integrations/haystack.py.
# The core makes these Documents from a template of the dataclass's ``__dict__``
# (``rust/py/frameworks/``); the shortcut is checked once at import against documents built
# normally, and the constructor is used whenever they differ.
_new = object.__new__
_set = object.__setattr__
_FIELDS = [field.name for field in fields(Document)]
# The tree keys of each chunk's meta, in the order they are written (the core writes them
# under these names: ``_core.haystack_cut``), then what a chunk carries, where it has it.
META_KEYS = (
    "__level",
    "__block_size",
    "__parent_id",
    "__children_ids",
    "source_id",
    "page_number",
    "split_id",
    "split_idx_start",
    "split_idx_end",
    "start_byte",
    "end_byte",
    "headings",
    "symbols",
    "language",
    *OWN_KEYS,
)
_SHAPE = _core.ModelShape(
    Document,
    {
        "id": None,
        "content": None,
        "blob": None,
        "meta": None,
        "score": None,
        "embedding": None,
        "sparse_embedding": None,
    },
    "id",
    "content",
    "meta",
    None,
    META_KEYS,
)


def _constructed(id: str, content: str, meta: dict[str, Any]) -> Document:
    return Document(id=id, content=content, meta=meta)


def _dict_setter() -> Any:
    """The ``__set__`` of the descriptor that holds a ``Document``'s ``__dict__``."""
    for klass in Document.__mro__:
        if "__dict__" in vars(klass):
            return vars(klass)["__dict__"].__set__
    return lambda document, values: _set(document, "__dict__", values)  # pragma: no cover


_set_dict = _dict_setter()


# One document's tree and how to write it: its chunks (levels top first), the meta they
# copy, the block sizes (top first), the document's id, the top chunks' parent id (the root's
# id, or None) and the char offsets of the form feeds.
_Tree = tuple[list[Chunk], dict[str, Any], list[int], str, str | None, list[int]]


def _constructed_tree(tree: _Tree) -> tuple[list[Document], list[str]]:
    """One document's tree through Haystack's constructor (the reference path)."""
    chunks, meta, sizes, root_id, top_parent, page_breaks = tree
    deep = not is_shallow(meta)
    carried = CarriedFields(meta)
    depth_of_leaves = len(sizes)
    out: list[Document] = []
    top_ids: list[str] = []
    for chunk in chunks:
        depth = depth_of_leaves - chunk.level
        parent_id = chunk.parent_id
        if parent_id is None:
            top_ids.append(chunk.id)
        # The document's meta, then the tree keys in their order (a key already in the meta
        # keeps its place and takes the chunk's value).
        meta_fields = {
            **(copy.deepcopy(meta) if deep else meta),
            "__level": depth,
            "__block_size": sizes[depth - 1],
            "__parent_id": parent_id if parent_id is not None else top_parent,
            "__children_ids": list(chunk.child_ids),
            "source_id": root_id,
            "page_number": 1 + bisect.bisect_left(page_breaks, chunk.start_char),
            "split_id": chunk.index,
            "split_idx_start": chunk.start_char,
            "split_idx_end": chunk.end_char,
            "start_byte": chunk.start_byte,
            "end_byte": chunk.end_byte,
        }
        meta_fields.update(carried.of(chunk.metadata))
        out.append(_constructed(chunk.id, chunk.text, meta_fields))
    return out, top_ids


def _filled_root(values: dict[str, Any]) -> Document:
    root = _new(Document)
    _set_dict(root, values)
    return root


def _same_haystack_layout(shape: Any = _SHAPE) -> bool:
    """Whether the core's documents (made by ``shape``) and a filled root are the
    constructor's, on probes of every key, with shallow and deep-copied meta."""
    try:
        parent = Chunk("p1", "probe text", "doc", 0, 1, 0, 10, 0, 10, None, ("c1",))
        child = Chunk(
            "c1", "probe", "doc", 0, 0, 6, 11, 6, 11, "p1", (), {"symbols": ("S",), "language": "c"}
        )
        header = {"text": "A", "start_char": 0, "end_char": 1, "start_byte": 0, "end_byte": 1}
        own = {"source_start_byte": 2, "source_end_byte": 9, "table_header": header}
        page = Chunk(
            "c2", "row", "doc", 1, 0, 0, 3, 0, 3, "p1", (), {**own, "page_first": 2, "page_last": 3}
        )
        for meta in ({"key": 1, "__level": "stale"}, {"tags": ["a"]}, {"page_first": 5}):
            arguments: _Tree = ([parent, child, page], meta, [20, 10], "doc", "root", [3])
            built, top_ids = _core.haystack_documents(shape, *arguments)
            expected, expected_top = _constructed_tree(arguments)
            if top_ids != expected_top or len(built) != len(expected):
                return False
            for reference, filled in zip(expected, built, strict=True):
                if not (
                    type(reference) is type(filled)
                    and list(reference.__dict__.items()) == list(filled.__dict__.items())
                    and list(reference.meta.items()) == list(filled.meta.items())
                    and list(filled.__dict__) == _FIELDS
                    and reference.to_dict() == filled.to_dict()
                    and reference == filled
                ):
                    return False
        root = _constructed("id", "probe", {"key": 1})
        return (
            list(_filled_root(dict(root.__dict__)).__dict__.items()) == list(root.__dict__.items())
            and _filled_root(dict(root.__dict__)) == root
        )
    except Exception:  # any surprise: keep the constructor
        return False


def _haystack_shortcut() -> bool:
    """Whether the core fills the Documents: for a declared haystack-ai whose Documents it
    fills as the constructor builds them."""
    return within_declared_range("haystack-ai", "haystack") and _same_haystack_layout()


_FAST = _haystack_shortcut()


@component
class SpanchunkDocumentSplitter:
    """Split documents into a tree of blocks for Haystack's ``AutoMergingRetriever``.

    Args:
        block_sizes: The size of every level (a set or a list; cut largest first).
        split_overlap: Overlap between consecutive leaves, at most, at a separator boundary.
        unit: ``"char"``, ``"byte"``, ``"token"`` (with ``encoding``), or Haystack's own
            ``"word"``, ``"sentence"``, ``"passage"`` or ``"page"`` (spanchunk's rules: see
            the README).
        encoding: A tiktoken encoding for token units.
        markdown: Cut the top level at Markdown sections; every chunk gets ``headings``.
        language: Cut the top level of source code of this language (``"python"``,
            ``"rust"``, ...) at its definitions; every chunk gets ``symbols`` and
            ``language``.
        html: Cut each document as an HTML page (its readable text, by its headings, at the
            top level); every chunk gets ``headings``, ``source_start_byte`` and
            ``source_end_byte``. Not with ``markdown`` or ``language``.
        include_root: Return the original document as the root (``__level`` 0), as
            Haystack's ``HierarchicalDocumentSplitter`` does. Without it, the top chunks
            have no ``__parent_id``.

    Outputs:
        documents: Every document of every tree: each root, then its levels from the top.
        leaf_documents: The leaves only (what gets embedded).
        parent_documents: Everything with children (roots included): the parent store's.

    Raises:
        ValueError: ``block_sizes`` is empty, or two of ``markdown``, ``html`` and
            ``language`` are given.
    """

    def __init__(
        self,
        block_sizes: Iterable[int] = (2000, 400),
        split_overlap: int = 0,
        *,
        unit: Unit = "char",
        encoding: str | None = None,
        markdown: bool = False,
        include_root: bool = True,
        language: str | None = None,
        html: bool = False,
    ) -> None:
        sizes = sorted(set(block_sizes), reverse=True)
        if not sizes:
            raise ValueError("block_sizes must not be empty: give at least one block size")
        self.block_sizes = sizes
        self.split_overlap = split_overlap
        self.unit = unit
        self.encoding = encoding
        self.markdown = markdown
        self.include_root = include_root
        self.language = language
        self.html = html
        self._chunker: HierarchicalChunker = hierarchical_chunker(
            sizes, split_overlap, unit, encoding, markdown, language=language, html=html
        )

    @component.output_types(
        documents=list[Document],
        leaf_documents=list[Document],
        parent_documents=list[Document],
    )
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """Split each document into its tree of blocks.

        Args:
            documents: Documents with text content.

        Returns:
            ``documents``, ``leaf_documents`` and ``parent_documents`` (see the class).

        Raises:
            ValueError: A document has no text content.
        """
        chunker = self._chunker
        if _FAST and self.split_overlap == 0 and hooks.cuts_in_core(chunker, "chunk_tree"):
            out, leaves, parents = self._cut(documents)
        else:
            out = []
            for document in documents:
                out.extend(self._tree(document))
            leaves = [doc for doc in out if not doc.meta["__children_ids"]]
            parents = [doc for doc in out if doc.meta["__children_ids"]]
        return {"documents": out, "leaf_documents": leaves, "parent_documents": parents}

    @component.output_types(
        documents=list[Document],
        leaf_documents=list[Document],
        parent_documents=list[Document],
    )
    async def run_async(self, documents: list[Document]) -> dict[str, list[Document]]:
        """``run`` in a worker thread (the core releases the GIL while it cuts)."""
        return await asyncio.to_thread(self.run, documents)

    def _cut(
        self, documents: list[Document]
    ) -> tuple[list[Document], list[Document], list[Document]]:
        """Every tree cut and written in one core call; only the chunks the registry gets
        are made as ``Chunk`` objects (see ``hooks.cuts_in_core``). Returns the documents, and
        again the leaves and the parents among them, in order."""
        chunker = self._chunker
        include_root = self.include_root
        columns = []
        for document in documents:
            text = _text_of(document)
            root_id = check_id(document.id)
            top_parent = root_id if include_root else None
            columns.append((text, root_id, document.meta, top_parent, self._page_breaks(text)))
        trees = cut_registered(
            chunker,
            _core.haystack_cut,
            _SHAPE,
            hooks.levels(chunker),
            chunker.fingerprint(),
            columns,
            self.block_sizes,
            # The parents go out as Haystack documents (for the document store); a registry
            # of them here would only grow with every run.
            register=False,
        )
        out: list[Document] = []
        leaves: list[Document] = []
        parents: list[Document] = []
        for document, (tree, top_ids, tree_leaves, tree_parents) in zip(
            documents, trees, strict=True
        ):
            if include_root:
                root = _root(document, top_ids)
                out.append(root)
                (parents if top_ids else leaves).append(root)
            out.extend(tree)
            leaves.extend(tree_leaves)
            parents.extend(tree_parents)
        return out, leaves, parents

    def _tree(self, document: Document) -> list[Document]:
        text = _text_of(document)
        chunker = self._chunker
        root_id = document.id
        top_parent = root_id if self.include_root else None
        page_breaks = self._page_breaks(text)
        chunks = chunker.chunk_tree(SpanDocument(text, id=root_id))
        chunker.clear()  # the parents go out as documents: the registry would only grow
        arguments: _Tree = (
            chunks,
            document.meta,
            self.block_sizes,
            root_id,
            top_parent,
            page_breaks,
        )
        if _FAST:
            out, top_ids = _core.haystack_documents(_SHAPE, *arguments)
        else:
            out, top_ids = _constructed_tree(arguments)
        if self.split_overlap > 0:
            _mark_overlaps(chunks, out)
        if not self.include_root:
            return out
        return [_root(document, top_ids), *out]

    def _page_breaks(self, text: str) -> list[int]:
        """The char offsets of the form feeds in the text the chunks index: an HTML page's
        readable text (read only when its source has a form feed), else the document's."""
        if self.html and "\f" in text:
            text = HtmlChunker(1).read(text).text
        return PageNumbers(text).breaks

    def to_dict(self) -> dict[str, Any]:
        """The component's settings, for pipeline serialisation."""
        return default_to_dict(
            self,
            block_sizes=self.block_sizes,
            split_overlap=self.split_overlap,
            unit=self.unit,
            encoding=self.encoding,
            markdown=self.markdown,
            include_root=self.include_root,
            **({"language": self.language} if self.language is not None else {}),
            html=self.html,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SpanchunkDocumentSplitter:
        """The component from ``to_dict``'s output."""
        return default_from_dict(cls, data)


def _text_of(document: Document) -> str:
    """The text of a document to split; ValueError when it has none."""
    text = document.content
    if text is None:
        raise ValueError(
            f"SpanchunkDocumentSplitter splits text: document {document.id!r} has no "
            "content (convert it to text first)"
        )
    return text


def _root(document: Document, top_ids: list[str]) -> Document:
    """The caller's document with the root's tree fields, as Haystack builds it.

    That is ``replace(document, meta=...)``, the document's own fields filled directly when
    the layout allows (``replace`` runs the whole constructor again).
    """
    # A deep copy, as Haystack's own splitter makes (deepcopy of a meta of scalars would be
    # a tenth of a run).
    root_meta = metadata_copier(document.meta)(document.meta)
    root_meta.update(
        {"__block_size": 0, "__parent_id": None, "__children_ids": top_ids, "__level": 0}
    )
    values = document.__dict__
    if _FAST and type(document) is Document and list(values) == _FIELDS:
        return _filled_root({**values, "meta": root_meta})
    return replace(document, meta=root_meta)


def _mark_overlaps(chunks: list[Chunk], documents: list[Document]) -> None:
    """Haystack's ``_split_overlap`` on overlapping consecutive leaves of one parent.

    Each side gets ``{"doc_id": other id, "range": (start, end)}``, the range in the
    *previous* leaf's coordinates on the later one and in its own on the earlier one, as
    ``DocumentSplitter`` writes it.
    """
    previous: tuple[Chunk, Document] | None = None
    for chunk, document in zip(chunks, documents, strict=True):
        if chunk.level != 0:
            continue
        document.meta["_split_overlap"] = []
        if previous is not None:
            before, before_document = previous
            if before.parent_id == chunk.parent_id and before.end_char > chunk.start_char:
                shared = (chunk.start_char - before.start_char, before.end_char - before.start_char)
                document.meta["_split_overlap"].append({"doc_id": before.id, "range": shared})
                before_document.meta["_split_overlap"].append(
                    {"doc_id": chunk.id, "range": (0, shared[1] - shared[0])}
                )
        previous = (chunk, document)
