"""LlamaIndex: a node parser for hierarchical (auto-merging) retrieval with exact offsets.

``SpanchunkNodeParser`` is a ``NodeParser`` that returns, per document, every level of one
spanchunk tree as ``TextNode`` objects, in the order of LlamaIndex's own
``HierarchicalNodeParser`` (the top level first, the leaves last). Unlike it:

- ``start_char_idx`` / ``end_char_idx`` are the chunk's exact offsets in the *document*,
  computed by construction: the base class's ``_postprocess_parsed_nodes`` (which
  re-finds each node's text with ``str.find``, relative to the parent it was cut from) is
  never run;
- node ids are spanchunk's deterministic chunk ids (a hash of the document id, the level,
  the chunk's text and the settings), not UUIDs, so parsing the same document again gives the
  same ids, and two identical paragraphs get different ones;
- one pass over the text cuts every level, in the Rust core.

Relationships, as ``get_leaf_nodes``, ``get_root_nodes``, ``get_deeper_nodes`` and
``AutoMergingRetriever`` read them:

============  ========================================================================
``SOURCE``    the document the node was cut from (every level)
``PARENT``    the chunk one level up (absent at the top level)
``CHILD``     the chunks one level down, in order (absent for the leaves)
``PREVIOUS``  the previous chunk of the same level and document, in reading order
``NEXT``      the next one (with ``include_prev_next_rel``, the default)
============  ========================================================================

Field mapping: ``node.node_id`` = ``Chunk.id``; ``node.text`` = ``Chunk.text``;
``start_char_idx`` / ``end_char_idx`` = ``Chunk.start_char`` / ``end_char``;
``ref_doc_id`` = the document's ``id_``; ``metadata`` = the document's metadata (with
``include_metadata``, the default) plus ``level`` (``Chunk.level``: 0 for the leaves),
``start_byte``, ``end_byte`` and, for Markdown and HTML, ``headings`` (for source code,
``symbols`` and ``language``), and where the chunk has them, ``source_start_byte`` and
``source_end_byte`` (an HTML page's chunk: its byte range in the page's UTF-8 source),
``table_header`` (a chunk of a table with a header row: the row, as a plain dict) and
``page_first`` and ``page_last`` (a text with page markers: the pages it spans). Those keys
are excluded from the embedding and LLM text (``excluded_embed_metadata_keys`` /
``excluded_llm_metadata_keys``), so they do not change what is embedded.

With ``html=True`` each document is an HTML page: the nodes' text is the page's readable
text, which ``start_char_idx`` / ``end_char_idx`` index (``HtmlChunker.read`` gives it), and
``source_start_byte`` / ``source_end_byte`` locate each node in the page's source.

Example:
    >>> from llama_index.core import Document
    >>> from llama_index.core.node_parser import get_leaf_nodes, get_root_nodes
    >>> parser = SpanchunkNodeParser(chunk_sizes=[400, 100])
    >>> document = Document(text="A sentence of some length. " * 40, id_="doc")
    >>> nodes = parser.get_nodes_from_documents([document])
    >>> leaf = get_leaf_nodes(nodes)[3]
    >>> document.text[leaf.start_char_idx : leaf.end_char_idx] == leaf.text
    True
    >>> len(get_root_nodes(nodes)), leaf.parent_node.node_id in {n.node_id for n in nodes}
    (3, True)
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from hashlib import sha256
from typing import Any

from spanchunk import Chunk, HierarchicalChunker
from spanchunk import Document as SpanDocument
from spanchunk.integrations._common import (
    OWN_KEYS,
    CarriedFields,
    hierarchical_chunker,
    missing_extra,
    same_model,
    within_declared_range,
)
from spanchunk.units import Unit

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.callbacks import CBEventType, EventPayload
    from llama_index.core.node_parser.interface import NodeParser
    from llama_index.core.schema import (
        DEFAULT_TEXT_NODE_TMPL,
        BaseNode,
        Document,
        MetadataMode,
        NodeRelationship,
        ObjectType,
        RelatedNodeInfo,
        TextNode,
    )
    from llama_index.core.utils import get_tqdm_iterable
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise missing_extra("llama-index-core", "llamaindex", error) from None

__all__ = ["SpanchunkNodeParser"]

# Metadata keys this parser adds; kept out of the text that is embedded or shown to an LLM.
SPAN_KEYS = ("level", "start_byte", "end_byte", "headings", "symbols", "language", *OWN_KEYS)
# What a document's metadata loses when copied into its nodes: what this parser writes, but a
# document's own ``language`` (a code chunk's overrides it) and its own pages (where a piece's
# chunks' pages count from: CarriedFields).
_WRITTEN_KEYS = frozenset(SPAN_KEYS) - {"language", "page_first", "page_last"}


def _node_hash(text: str, metadata: dict[str, Any]) -> str:
    """``TextNode.hash`` of a node with this text and metadata, before the node exists."""
    return sha256((text + str(metadata)).encode("utf-8", "surrogatepass")).hexdigest()


def _hash_matches() -> bool:
    """Whether ``_node_hash`` agrees with this llama-index-core's ``TextNode.hash``."""
    try:
        probe = TextNode(text="probe text", metadata={"key": 1, "level": 0})
        return probe.hash == _node_hash("probe text", {"key": 1, "level": 0})
    except Exception:  # any surprise: relate the built nodes instead
        return False


_HASH_MATCHES = _hash_matches()

# Speed: benches/NOTES.md, under python/spanchunk/integrations/llamaindex.py.
# ``TextNode`` and ``RelatedNodeInfo`` are filled as pydantic's ``model_construct`` fills
# them; the shortcut is checked once at import against the constructors' instances, and the
# constructors are used whenever they differ.
_new = object.__new__
_NODE_FIELDS_SET = frozenset(
    {
        "id_",
        "text",
        "start_char_idx",
        "end_char_idx",
        "metadata",
        "excluded_embed_metadata_keys",
        "excluded_llm_metadata_keys",
        "metadata_separator",
        "metadata_template",
        "text_template",
        "relationships",
    }
)
_INFO_FIELDS_SET = frozenset({"node_id", "node_type", "metadata", "hash"})


def _constructed_node(**fields: Any) -> TextNode:
    return TextNode(**fields)


def _constructed_info(node_id: str, metadata: dict[str, Any], hash: str) -> RelatedNodeInfo:
    return RelatedNodeInfo(node_id=node_id, node_type=ObjectType.TEXT, metadata=metadata, hash=hash)


def _fill_model(instance: Any, values: dict[str, Any], fields_set: frozenset[str]) -> Any:
    _set = object.__setattr__
    _set(instance, "__dict__", values)
    _set(instance, "__pydantic_fields_set__", set(fields_set))
    _set(instance, "__pydantic_extra__", None)
    _set(instance, "__pydantic_private__", None)
    return instance


def _filled_node(
    *,
    id_: str,
    text: str,
    start_char_idx: int,
    end_char_idx: int,
    metadata: dict[str, Any],
    excluded_embed_metadata_keys: list[str],
    excluded_llm_metadata_keys: list[str],
    metadata_separator: str,
    metadata_template: str,
    text_template: str,
    relationships: dict[NodeRelationship, Any],
) -> TextNode:
    values = {
        "id_": id_,
        "embedding": None,
        "metadata": metadata,
        "excluded_embed_metadata_keys": excluded_embed_metadata_keys,
        "excluded_llm_metadata_keys": excluded_llm_metadata_keys,
        "relationships": relationships,
        "metadata_template": metadata_template,
        "metadata_separator": metadata_separator,
        "text": text,
        "mimetype": "text/plain",
        "start_char_idx": start_char_idx,
        "end_char_idx": end_char_idx,
        "text_template": text_template,
    }
    node: TextNode = _fill_model(_new(TextNode), values, _NODE_FIELDS_SET)
    return node


def _filled_info(node_id: str, metadata: dict[str, Any], hash: str) -> RelatedNodeInfo:
    values = {"node_id": node_id, "node_type": ObjectType.TEXT, "metadata": metadata, "hash": hash}
    info: RelatedNodeInfo = _fill_model(_new(RelatedNodeInfo), values, _INFO_FIELDS_SET)
    return info


def _same_llamaindex_layout() -> bool:
    try:
        info = _constructed_info("probe-info", {"key": 1}, "hash")
        if not same_model(info, _filled_info("probe-info", {"key": 1}, "hash")):
            return False
        fields: dict[str, Any] = {
            "id_": "probe",
            "text": "probe text",
            "start_char_idx": 0,
            "end_char_idx": 10,
            "metadata": {"key": 1},
            "excluded_embed_metadata_keys": ["key"],
            "excluded_llm_metadata_keys": ["key"],
            "metadata_separator": "\n",
            "metadata_template": "{key}: {value}",
            "text_template": DEFAULT_TEXT_NODE_TMPL,
            "relationships": {NodeRelationship.PARENT: info, NodeRelationship.CHILD: [info]},
        }
        return same_model(_constructed_node(**fields), _filled_node(**fields))
    except Exception:  # any surprise: keep the constructors
        return False


def _llamaindex_shortcut() -> bool:
    """Whether nodes are filled without validation: for a declared llama-index-core whose
    nodes are filled as the constructors build them."""
    return within_declared_range("llama-index-core", "llamaindex") and _same_llamaindex_layout()


_make_node, _make_info = (
    (_filled_node, _filled_info)
    if _llamaindex_shortcut()
    else (_constructed_node, _constructed_info)
)


class SpanchunkNodeParser(NodeParser):
    """Every level of a spanchunk tree as LlamaIndex ``TextNode`` objects.

    Args:
        chunk_sizes: The size of every level, the top first (LlamaIndex's
            ``HierarchicalNodeParser`` default: ``[2048, 512, 128]``). One size gives flat
            nodes with no parents.
        chunk_overlap: Overlap between consecutive leaves, at most, at a separator boundary
            (parents never overlap). Default 0.
        unit: ``"char"``, ``"byte"`` or ``"token"`` (with ``encoding``; LlamaIndex's sizes
            are tokens of ``cl100k_base``).
        encoding: A tiktoken encoding for token units.
        markdown: Cut the top level at Markdown sections; every node gets ``headings``.
        language: Cut the top level of source code of this language (``"python"``, ...) at
            its definitions; every node gets ``symbols`` and ``language``.
        html: Cut each document as an HTML page (its readable text, by its headings, at the
            top level); every node gets ``headings``, ``source_start_byte`` and
            ``source_end_byte``. Not with ``markdown`` or ``language``.
        include_metadata: Copy the document's metadata into every node.
        include_prev_next_rel: Add ``PREVIOUS`` / ``NEXT`` relationships.

    The base class's ``id_func`` is not used: ids are spanchunk's.

    Raises:
        ValueError: Two of ``markdown``, ``html`` and ``language`` are given.
    """

    chunk_sizes: list[int] = Field(
        default_factory=lambda: [2048, 512, 128],
        description="The chunk size of every level, the top first.",
    )
    chunk_overlap: int = Field(default=0, description="Overlap between consecutive leaves.")
    unit: Unit = Field(default="char", description="'char', 'byte' or 'token'.")
    encoding: str | None = Field(default=None, description="tiktoken encoding of token units.")
    markdown: bool = Field(default=False, description="Cut at Markdown sections first.")
    language: str | None = Field(
        default=None, description="Cut source code of this language at its definitions first."
    )
    html: bool = Field(default=False, description="Cut each document as an HTML page.")

    _chunker: HierarchicalChunker = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        """Build the spanchunk chunker once, checking the settings."""
        super().model_post_init(context)
        self._chunker = hierarchical_chunker(
            self.chunk_sizes,
            self.chunk_overlap,
            self.unit,
            self.encoding,
            self.markdown,
            language=self.language,
            html=self.html,
        )

    @classmethod
    def from_defaults(
        cls,
        chunk_sizes: Sequence[int] | None = None,
        chunk_overlap: int = 0,
        **kwargs: Any,
    ) -> SpanchunkNodeParser:
        """The parser with LlamaIndex's default sizes ``[2048, 512, 128]`` unless given."""
        sizes = [2048, 512, 128] if chunk_sizes is None else list(chunk_sizes)
        return cls(chunk_sizes=sizes, chunk_overlap=chunk_overlap, **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any], **kwargs: Any) -> SpanchunkNodeParser:
        """The parser from ``to_dict``'s output (``from_json`` reads it too). The base class's
        ``id_func``, written there as a description of itself and not used by this parser,
        is left out: given back, it is not a function."""
        settings = {key: value for key, value in data.items() if key != "id_func"}
        parser: SpanchunkNodeParser = super().from_dict(settings, **kwargs)
        return parser

    @classmethod
    def class_name(cls) -> str:
        """The name LlamaIndex serialises the parser under."""
        return "SpanchunkNodeParser"

    @property
    def chunker(self) -> HierarchicalChunker:
        """The spanchunk chunker that cuts every level."""
        return self._chunker

    def get_nodes_from_documents(
        self,
        documents: Sequence[BaseNode],
        show_progress: bool = False,
        **kwargs: Any,
    ) -> list[BaseNode]:
        """Every level of every document as nodes, with exact offsets and relationships.

        Unlike the base class, no post-processing searches for the nodes' text: offsets,
        metadata and relationships are set once, here.

        Args:
            documents: LlamaIndex documents (or text nodes: a node with a
                ``start_char_idx`` gets offsets in its own source, and its source as
                ``SOURCE``).
            show_progress: Show a progress bar over the documents.
            **kwargs: Ignored (the base class's signature).

        Returns:
            For each document, its nodes level by level from the top, each level in
            reading order.
        """
        with self.callback_manager.event(
            CBEventType.NODE_PARSING, payload={EventPayload.DOCUMENTS: documents}
        ) as event:
            nodes = self._parse_nodes(documents, show_progress=show_progress)
            event.on_end({EventPayload.NODES: nodes})
        return nodes

    async def aget_nodes_from_documents(
        self,
        documents: Sequence[BaseNode],
        show_progress: bool = False,
        **kwargs: Any,
    ) -> list[BaseNode]:
        """``get_nodes_from_documents`` in a worker thread (the core releases the GIL)."""
        return await asyncio.to_thread(
            self.get_nodes_from_documents, documents, show_progress, **kwargs
        )

    def _parse_nodes(
        self,
        nodes: Sequence[BaseNode],
        show_progress: bool = False,
        **kwargs: Any,
    ) -> list[BaseNode]:
        out: list[BaseNode] = []
        for node in get_tqdm_iterable(nodes, show_progress, "Parsing documents into nodes"):
            out.extend(self._document_nodes(node))
        return out

    def _document_nodes(self, document: BaseNode) -> list[TextNode]:
        text = document.get_content(metadata_mode=MetadataMode.NONE)
        char_offset = 0
        byte_offset: int | None = 0
        source = document.as_related_node_info()
        if not isinstance(document, Document) and isinstance(document, TextNode):
            # A node cut from a larger document: offsets continue in that document.
            if document.source_node is not None:
                source = document.source_node
            if document.start_char_idx:
                char_offset = document.start_char_idx
                byte_offset = document.metadata.get("start_byte")
        chunks = self._chunker.chunk_tree(SpanDocument(text, id=document.node_id))

        base = (
            {key: value for key, value in document.metadata.items() if key not in _WRITTEN_KEYS}
            if self.include_metadata
            else {}
        )
        excluded_embed = list(dict.fromkeys([*document.excluded_embed_metadata_keys, *SPAN_KEYS]))
        excluded_llm = list(dict.fromkeys([*document.excluded_llm_metadata_keys, *SPAN_KEYS]))
        text_template = getattr(document, "text_template", DEFAULT_TEXT_NODE_TMPL)
        carried = CarriedFields(document.metadata, char_offset, byte_offset)
        texts: list[str] = []
        metadatas: list[dict[str, Any]] = []
        for chunk in chunks:
            metadata = dict(base)
            metadata["level"] = chunk.level
            if byte_offset is not None:
                metadata["start_byte"] = chunk.start_byte + byte_offset
                metadata["end_byte"] = chunk.end_byte + byte_offset
            chunk_metadata = chunk.metadata
            if chunk_metadata:
                metadata.update(carried.of(chunk_metadata))
            texts.append(chunk.text)
            metadatas.append(metadata)
        # One RelatedNodeInfo per node, shared by every relationship that points at it, made
        # before the nodes so that each node is validated once, relationships included
        # (as_related_node_info on built nodes and assigning relationships afterwards cost
        # about a third of the parser's time per node).
        if _HASH_MATCHES:
            make_info = _make_info
            infos = {
                chunk.id: make_info(chunk.id, dict(metadata), _node_hash(node_text, metadata))
                for chunk, node_text, metadata in zip(chunks, texts, metadatas, strict=True)
            }
        else:  # pragma: no cover - a llama-index-core whose TextNode.hash differs
            infos = {}
        prev_next = self.include_prev_next_rel
        make_node = _make_node
        built: list[TextNode] = []
        for position, chunk in enumerate(chunks):
            relationships = (
                self._relationships(chunks, position, infos, source, prev_next) if infos else {}
            )
            built.append(
                make_node(
                    id_=chunk.id,
                    text=texts[position],
                    start_char_idx=chunk.start_char + char_offset,
                    end_char_idx=chunk.end_char + char_offset,
                    metadata=metadatas[position],
                    excluded_embed_metadata_keys=list(excluded_embed),
                    excluded_llm_metadata_keys=list(excluded_llm),
                    metadata_separator=document.metadata_separator,
                    metadata_template=document.metadata_template,
                    text_template=text_template,
                    relationships=relationships,
                )
            )
        if not infos:  # pragma: no cover - see above: relate the built nodes instead
            self._relate(chunks, built, source)
        return built

    @staticmethod
    def _relationships(
        chunks: list[Chunk],
        position: int,
        infos: dict[str, RelatedNodeInfo],
        source: RelatedNodeInfo,
        prev_next: bool,
    ) -> dict[NodeRelationship, Any]:
        """SOURCE, PARENT, CHILD, PREVIOUS and NEXT of the chunk at ``position``."""
        chunk = chunks[position]
        relationships: dict[NodeRelationship, Any] = {NodeRelationship.SOURCE: source}
        if chunk.parent_id is not None:
            relationships[NodeRelationship.PARENT] = infos[chunk.parent_id]
        if chunk.child_ids:
            relationships[NodeRelationship.CHILD] = [infos[i] for i in chunk.child_ids]
        if prev_next:
            # chunk_tree lists a document level by level, each level in reading order, so a
            # level's neighbours are the adjacent rows of the same level.
            if position > 0 and chunks[position - 1].level == chunk.level:
                relationships[NodeRelationship.PREVIOUS] = infos[chunks[position - 1].id]
            following = position + 1
            if following < len(chunks) and chunks[following].level == chunk.level:
                relationships[NodeRelationship.NEXT] = infos[chunks[following].id]
        return relationships

    def _relate(self, chunks: list[Chunk], nodes: list[TextNode], source: RelatedNodeInfo) -> None:
        """Set SOURCE, PARENT, CHILD, PREVIOUS and NEXT, sharing one info per node."""
        infos = {
            chunk.id: node.as_related_node_info() for chunk, node in zip(chunks, nodes, strict=True)
        }
        prev_next = self.include_prev_next_rel
        for position, (chunk, node) in enumerate(zip(chunks, nodes, strict=True)):
            relationships: dict[NodeRelationship, Any] = {NodeRelationship.SOURCE: source}
            if chunk.parent_id is not None:
                relationships[NodeRelationship.PARENT] = infos[chunk.parent_id]
            if chunk.child_ids:
                relationships[NodeRelationship.CHILD] = [infos[i] for i in chunk.child_ids]
            if prev_next:
                # chunk_tree lists a document level by level, each level in reading order,
                # so a level's neighbours are the adjacent rows of the same level.
                if position > 0 and chunks[position - 1].level == chunk.level:
                    relationships[NodeRelationship.PREVIOUS] = infos[chunks[position - 1].id]
                following = position + 1
                if following < len(chunks) and chunks[following].level == chunk.level:
                    relationships[NodeRelationship.NEXT] = infos[chunks[following].id]
            node.relationships = relationships
