"""LlamaIndex: SpanchunkNodeParser's nodes, relationships and AutoMergingRetriever end to end.

Real llama-index-core; embeddings are MockEmbedding and a deterministic keyword counter, so no
model is downloaded and every score is known.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from itertools import pairwise
from typing import Any

import pytest
from _fields import (
    LABELLED,
    MARKDOWN_TABLE,
    PAGES,
    check_markdown_table_header,
    html_page,
    page_at,
    words,
)
from conftest import corpus_file, read_document
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.node_parser import (
    HierarchicalNodeParser,
    get_deeper_nodes,
    get_leaf_nodes,
    get_root_nodes,
)
from llama_index.core.retrievers import AutoMergingRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeRelationship, TextNode
from spanchunk import Document as SpanDocument
from spanchunk import HierarchicalChunker, HtmlChunker, ParentChildChunker
from spanchunk.integrations._common import OWN_KEYS
from spanchunk.integrations.llamaindex import SpanchunkNodeParser

REPEATED = "\n\n".join(["Exactly the same paragraph, repeated many times over."] * 30)


def corpus_document(folder: str, name: str) -> Document:
    text = read_document(corpus_file(folder, name))
    return Document(text=text, id_=name, metadata={"file_name": name})


def assert_exact(text: str, nodes: list[BaseNode]) -> None:
    encoded = text.encode("utf-8")
    for node in nodes:
        assert isinstance(node, TextNode)
        assert text[node.start_char_idx : node.end_char_idx] == node.text
        start, end = node.metadata["start_byte"], node.metadata["end_byte"]
        assert encoded[start:end] == node.text.encode("utf-8")


def test_offsets_are_exact_in_the_document_on_the_corpus() -> None:
    document = corpus_document("markdown-zh", "ch04-01-what-is-ownership.md")
    nodes = SpanchunkNodeParser(chunk_sizes=[2048, 512, 128]).get_nodes_from_documents([document])
    assert_exact(document.text, nodes)
    levels = [node.metadata["level"] for node in nodes]
    assert levels == sorted(levels, reverse=True)  # top level first, as LlamaIndex orders
    assert set(levels) == {0, 1, 2}
    # The framework's own parser puts lower levels at parent-relative offsets; these are not.
    deep = [node for node in nodes if node.metadata["level"] == 0]
    assert max(node.start_char_idx for node in deep) > 2048  # type: ignore[attr-defined]


def test_repeated_paragraphs_get_distinct_ids_and_their_own_offsets() -> None:
    document = Document(text=REPEATED, id_="repeated")
    nodes = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents([document])
    assert_exact(REPEATED, nodes)
    assert len({node.node_id for node in nodes}) == len(nodes)
    leaves = get_leaf_nodes(nodes)
    assert len(leaves) == 30
    starts = [leaf.start_char_idx for leaf in leaves]  # type: ignore[attr-defined]
    assert starts == sorted(set(starts))


def test_ids_are_deterministic() -> None:
    first = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents(
        [Document(text=REPEATED, id_="d")]
    )
    again = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents(
        [Document(text=REPEATED, id_="d")]
    )
    other = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents(
        [Document(text=REPEATED, id_="e")]
    )
    assert [n.node_id for n in first] == [n.node_id for n in again]
    assert {n.node_id for n in first}.isdisjoint(n.node_id for n in other)
    # The same ids as the spanchunk tree of a document with that id (two levels: the
    # ParentChildChunker of the same sizes; more: the HierarchicalChunker).
    tree = ParentChildChunker(300, 60).chunk_tree(SpanDocument(REPEATED, id="d"))
    assert [n.node_id for n in first] == [chunk.id for chunk in tree]
    three = SpanchunkNodeParser(chunk_sizes=[300, 120, 60]).get_nodes_from_documents(
        [Document(text=REPEATED, id_="d")]
    )
    tree = HierarchicalChunker(sizes=[300, 120, 60]).chunk_tree(SpanDocument(REPEATED, id="d"))
    assert [n.node_id for n in three] == [chunk.id for chunk in tree]


def test_relationships_and_the_frameworks_tree_helpers() -> None:
    document = corpus_document("gutenberg", "pg1513.txt")
    parser = SpanchunkNodeParser(chunk_sizes=[2000, 500, 120])
    nodes = parser.get_nodes_from_documents([document])
    by_id = {node.node_id: node for node in nodes}
    roots = get_root_nodes(nodes)
    leaves = get_leaf_nodes(nodes)
    assert {n.metadata["level"] for n in roots} == {2}
    assert {n.metadata["level"] for n in leaves} == {0}
    middle = get_deeper_nodes(nodes, depth=1)
    assert {n.metadata["level"] for n in middle} == {1}
    assert len(get_deeper_nodes(nodes, depth=2)) == len(leaves)
    for node in nodes:
        assert node.source_node is not None
        assert node.source_node.node_id == document.doc_id
        assert node.ref_doc_id == document.doc_id
        if node.parent_node is not None:
            parent = by_id[node.parent_node.node_id]
            assert node.node_id in [child.node_id for child in parent.child_nodes or []]
            assert parent.start_char_idx <= node.start_char_idx  # type: ignore[attr-defined]
            assert node.end_char_idx <= parent.end_char_idx  # type: ignore[attr-defined]
        for child in node.child_nodes or []:
            assert by_id[child.node_id].parent_node.node_id == node.node_id  # type: ignore[union-attr]
    # PREVIOUS / NEXT link each level in reading order, across parent boundaries.
    for level_nodes in (roots, middle, leaves):
        for before, after in pairwise(level_nodes):
            assert before.next_node.node_id == after.node_id  # type: ignore[union-attr]
            assert after.prev_node.node_id == before.node_id  # type: ignore[union-attr]
            assert before.start_char_idx < after.start_char_idx  # type: ignore[attr-defined]
        assert level_nodes[0].prev_node is None
        assert level_nodes[-1].next_node is None


def test_metadata_is_inherited_and_span_keys_stay_out_of_the_embedding_text() -> None:
    document = Document(text=REPEATED, id_="m", metadata={"author": "ada"})
    nodes = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents([document])
    node = nodes[-1]
    assert node.metadata["author"] == "ada"
    embed_text = node.get_content(metadata_mode=MetadataMode.EMBED)
    assert "author: ada" in embed_text
    assert "start_byte" not in embed_text
    assert "level" not in node.get_content(metadata_mode=MetadataMode.LLM)
    bare = SpanchunkNodeParser(chunk_sizes=[300, 60], include_metadata=False)
    assert "author" not in bare.get_nodes_from_documents([document])[0].metadata


def test_markdown_headings_and_async() -> None:
    text = "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n## Use\n\nCall it."
    parser = SpanchunkNodeParser(chunk_sizes=[30, 12], markdown=True)
    nodes = asyncio.run(parser.aget_nodes_from_documents([Document(text=text, id_="g")]))
    assert [n.metadata["headings"] for n in get_root_nodes(nodes)] == [
        ["Guide"],
        ["Guide", "Install"],
        ["Guide", "Use"],
    ]
    assert nodes == parser([Document(text=text, id_="g")])  # TransformComponent call


def test_text_nodes_as_input_keep_offsets_in_their_source() -> None:
    document = Document(text=REPEATED, id_="src")
    pieces = SpanchunkNodeParser(chunk_sizes=[400]).get_nodes_from_documents([document])
    nodes = SpanchunkNodeParser(chunk_sizes=[100, 30]).get_nodes_from_documents(pieces)
    assert_exact(REPEATED, nodes)
    assert {node.source_node.node_id for node in nodes} == {"src"}  # type: ignore[union-attr]


class KeywordEmbedding(BaseEmbedding):
    """Counts of three fruit words (plus a bias for texts): known, deterministic scores."""

    def _vector(self, text: str, bias: float) -> list[float]:
        words = text.lower().split()
        return [*(float(words.count(word)) for word in ("apple", "banana", "cherry")), bias]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query, 0.0)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query, 0.0)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text, 1.0)


def fruit_text() -> str:
    filler = "words that fill the paragraph to a good length for the test"
    paragraphs = [
        f"apple apple apple {filler} one.",
        f"apple apple {filler} two.",
        f"apple {filler} three.",
        f"banana {filler} four.",
        *[f"banana cherry {filler} more {n}." for n in range(8)],
    ]
    return "\n\n".join(paragraphs)


def auto_merging(nodes: list[BaseNode], embed_model: Any, top_k: int) -> AutoMergingRetriever:
    storage_context = StorageContext.from_defaults()
    storage_context.docstore.add_documents(nodes)
    index = VectorStoreIndex(
        get_leaf_nodes(nodes), storage_context=storage_context, embed_model=embed_model
    )
    return AutoMergingRetriever(
        index.as_retriever(similarity_top_k=top_k), storage_context, simple_ratio_thresh=0.5
    )


@pytest.mark.parametrize(("top_k", "merged"), [(3, True), (2, False)])
def test_auto_merging_retriever_merges_when_more_than_half_the_children_are_hits(
    top_k: int, merged: bool
) -> None:
    text = fruit_text()
    document = Document(text=text, id_="fruit")
    nodes = SpanchunkNodeParser(chunk_sizes=[330, 100]).get_nodes_from_documents([document])
    first_parent = get_root_nodes(nodes)[0]
    assert len(first_parent.child_nodes or []) == 4  # three apple paragraphs and one banana
    results = auto_merging(nodes, KeywordEmbedding(), top_k).retrieve("apple")
    ids = [result.node.node_id for result in results]
    if merged:  # 3 of 4 children > 0.5: the framework swaps them for their parent
        assert ids == [first_parent.node_id]
        assert results[0].node.get_content() == text[: first_parent.end_char_idx]  # type: ignore[attr-defined]
    else:  # 2 of 4 is not more than half: the two leaves stay
        assert first_parent.node_id not in ids
        assert [result.node.metadata["level"] for result in results] == [0, 0]
        assert [r.node.text.count("apple") for r in results] == [3, 2]


def test_auto_merging_with_mock_embedding_merges_up_every_level() -> None:
    # MockEmbedding scores every leaf the same; retrieving all leaves makes every family
    # complete (ratio 1 > 0.5), so the framework merges level by level up to the roots.
    document = corpus_document("markdown-en", "ch03-02-data-types.md")
    nodes = SpanchunkNodeParser(chunk_sizes=[4000, 1200, 300]).get_nodes_from_documents([document])
    leaves = get_leaf_nodes(nodes)
    retriever = auto_merging(nodes, MockEmbedding(embed_dim=8), top_k=len(leaves))
    results = retriever.retrieve("any question")
    roots = get_root_nodes(nodes)
    assert sorted(r.node.node_id for r in results) == sorted(n.node_id for n in roots)
    assert_exact(document.text, [result.node for result in results])
    # One leaf alone is not more than half of a family of two or more: nothing merges.
    single = auto_merging(nodes, MockEmbedding(embed_dim=8), top_k=1).retrieve("any question")
    [hit] = single
    by_id = {node.node_id: node for node in nodes}
    family = by_id[hit.node.parent_node.node_id].child_nodes  # type: ignore[union-attr]
    assert hit.node.metadata["level"] == (0 if len(family or []) > 1 else 1)


def test_same_node_shape_as_the_frameworks_own_parser() -> None:
    document = Document(text=REPEATED, id_="shape")
    ours = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents([document])
    theirs = HierarchicalNodeParser.from_defaults(chunk_sizes=[300, 60]).get_nodes_from_documents(
        [document]
    )
    assert {type(node) for node in ours} == {type(node) for node in theirs} == {TextNode}
    ours_relations = {rel for node in ours for rel in node.relationships}
    theirs_relations = {rel for node in theirs for rel in node.relationships}
    assert theirs_relations <= ours_relations == set(NodeRelationship)


def test_related_node_infos_are_what_the_nodes_themselves_give() -> None:
    document = Document(text=REPEATED, id_="info", metadata={"author": "ada"})
    nodes = SpanchunkNodeParser(chunk_sizes=[300, 120, 60]).get_nodes_from_documents([document])
    by_id = {node.node_id: node for node in nodes}
    for node in nodes:
        for relation, related in node.relationships.items():
            if relation == NodeRelationship.SOURCE:
                assert related == document.as_related_node_info()
                continue
            for info in related if isinstance(related, list) else [related]:
                assert info == by_id[info.node_id].as_related_node_info()


def test_nodes_are_the_same_objects_the_constructor_builds() -> None:
    document = Document(text=REPEATED, id_="built", metadata={"author": "ada", "tags": ["a"]})
    nodes = SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents([document])
    for node in nodes[:3] + nodes[-3:]:
        fields = {name: getattr(node, name) for name in node.model_fields_set}
        built = TextNode(**fields)
        assert node == built
        assert list(node.__dict__.items()) == list(built.__dict__.items())
        assert node.model_fields_set == built.model_fields_set
        assert node.model_dump() == built.model_dump()
        assert TextNode.model_validate(node.model_dump()) == node
        for related in node.relationships.values():
            for info in related if isinstance(related, list) else [related]:
                assert type(info).model_validate(info.model_dump()) == info
                assert info.metadata is not node.metadata
    first, second = nodes[0], nodes[1]
    first.metadata["author"] = "changed"  # each node has its own metadata dict
    assert second.metadata["author"] == "ada"
    assert first.relationships[NodeRelationship.NEXT].metadata is not second.metadata


def assert_pages(text: str, nodes: list[BaseNode]) -> None:
    assert nodes
    for node in nodes:
        assert isinstance(node, TextNode)
        start, end = node.start_char_idx, node.end_char_idx
        assert start is not None and end is not None
        assert node.metadata["page_first"] == page_at(text, start), node.text
        assert node.metadata["page_last"] == page_at(text, end - 1), node.text


@pytest.mark.parametrize("sizes", [[400, 120], [400, 150, 60]])
def test_html_pages_carry_their_source_spans(sizes: list[int]) -> None:
    page = html_page()
    readable = HtmlChunker(100).read(page).text
    document = Document(text=page, id_="page.html", metadata={"file_name": "page.html"})
    nodes = SpanchunkNodeParser(chunk_sizes=sizes, html=True).get_nodes_from_documents([document])
    assert {node.metadata["level"] for node in nodes} == set(range(len(sizes)))
    assert_exact(readable, nodes)  # the offsets index the page's readable text
    source = page.encode("utf-8")
    for node in nodes:
        start, end = node.metadata["source_start_byte"], node.metadata["source_end_byte"]
        assert 0 <= start < end <= len(source)
        found = iter(words(source[start:end].decode("utf-8")))
        assert all(word in found for word in words(node.text)), node.text  # type: ignore[attr-defined]
        embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
        assert "source_start_byte" not in embedded and "file_name: page.html" in embedded
    tree = (
        ParentChildChunker(*sizes, parent_chunker="html")
        if len(sizes) == 2
        else HierarchicalChunker(sizes, chunkers=["html", None, None])
    ).chunk_tree(SpanDocument(page, id="page.html"))
    assert [node.node_id for node in nodes] == [chunk.id for chunk in tree]
    assert [
        {key: node.metadata[key] for key in ("source_start_byte", "source_end_byte")}
        for node in nodes
    ] == [
        {key: chunk.metadata[key] for key in ("source_start_byte", "source_end_byte")}
        for chunk in tree
    ]


def test_table_nodes_carry_the_header_as_a_plain_dict() -> None:
    document = Document(text=MARKDOWN_TABLE, id_="table")
    parser = SpanchunkNodeParser(chunk_sizes=[200, 60], markdown=True)
    nodes = parser.get_nodes_from_documents([document])
    headed = [node for node in nodes if "table_header" in node.metadata]
    assert {node.metadata["level"] for node in headed} == {0, 1} and len(headed) < len(nodes)
    for node in headed:
        check_markdown_table_header(node.metadata["table_header"])
        assert "table_header" not in node.get_content(metadata_mode=MetadataMode.EMBED)
        json.dumps(node.metadata)
    headed[0].metadata["table_header"]["text"] = "changed"  # each node has its own
    assert headed[1].metadata["table_header"]["text"] == "| Name | Size |"
    # Nodes cut from nodes: the header's span is in the document still.
    text = "# Intro\n\n" + "Some words of an introduction, café. " * 7 + "\n\n" + MARKDOWN_TABLE
    pieces = SpanchunkNodeParser(chunk_sizes=[200], markdown=True).get_nodes_from_documents(
        [Document(text=text, id_="later")]
    )
    again = SpanchunkNodeParser(chunk_sizes=[40], markdown=True).get_nodes_from_documents(pieces)
    moved = [node for node in again if "table_header" in node.metadata]
    assert moved
    for node in moved:
        header = node.metadata["table_header"]
        assert header["start_char"] > 200
        assert text[header["start_char"] : header["end_char"]] == header["text"]
        assert text.encode()[header["start_byte"] : header["end_byte"]] == header["text"].encode()


@pytest.mark.parametrize("text", [PAGES, LABELLED])
def test_pages_of_a_text_with_page_markers(text: str) -> None:
    [whole] = SpanchunkNodeParser(chunk_sizes=[60]).get_nodes_from_documents(
        [Document(text="One.\n\fTwo.\n\fThree.")]
    )
    assert (whole.metadata["page_first"], whole.metadata["page_last"]) == (1, 3)
    nodes = SpanchunkNodeParser(chunk_sizes=[400, 150, 60]).get_nodes_from_documents(
        [Document(text=text, id_="paged")]
    )
    assert_pages(text, nodes)
    # Nodes cut from those nodes: their pages count from the piece's first page.
    pieces = [node for node in nodes if node.metadata["level"] == 2]
    assert any(p.metadata["page_first"] < p.metadata["page_last"] for p in pieces)
    again = SpanchunkNodeParser(chunk_sizes=[100, 30]).get_nodes_from_documents(pieces)
    assert_exact(text, again)
    assert_pages(text, again)


def test_nodes_without_them_carry_none_of_the_keys() -> None:
    text = "# Title\n\n" + REPEATED + "\n\n## Part\n\n" + REPEATED[:300]
    nodes = [
        *SpanchunkNodeParser(chunk_sizes=[300, 60]).get_nodes_from_documents(
            [Document(text=REPEATED)]
        ),
        *SpanchunkNodeParser(chunk_sizes=[300, 120, 60], markdown=True).get_nodes_from_documents(
            [Document(text=text)]
        ),
        *SpanchunkNodeParser(chunk_sizes=[60], language="python").get_nodes_from_documents(
            [Document(text="def f():\n    return 1\n")]
        ),
    ]
    assert len(nodes) > 40
    assert not any(key in node.metadata for node in nodes for key in OWN_KEYS)


def test_html_is_one_structure_and_the_setting_serialises() -> None:
    for other in ({"markdown": True}, {"language": "python"}):
        with pytest.raises(ValueError, match="two structures: give one of them"):
            SpanchunkNodeParser(chunk_sizes=[400, 100], html=True, **other)
    parser = SpanchunkNodeParser(chunk_sizes=[400, 100], html=True)
    data = parser.to_dict()
    assert data["html"] is True and data["class_name"] == "SpanchunkNodeParser"
    document = Document(text=html_page(), id_="page.html")
    expected = parser.get_nodes_from_documents([document])
    for again in (
        SpanchunkNodeParser.from_dict(data),
        SpanchunkNodeParser.from_json(parser.to_json()),
        pickle.loads(pickle.dumps(parser)),
    ):
        assert again.html and again.to_dict() == data
        assert again.get_nodes_from_documents([document]) == expected
    assert not SpanchunkNodeParser.from_dict(SpanchunkNodeParser().to_dict()).html
