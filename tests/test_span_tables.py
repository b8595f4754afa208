"""The span tables the core hands to numpy without a copy: their memory lives as long as any
array over it (not as long as the chunker), their layout is what the dtype says, and arrays
passed back in are read soundly whatever their alignment."""

from __future__ import annotations

import gc
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from spanchunk import HierarchicalChunker, ParentChildChunker, _core
from spanchunk.chunkers.spans import SPAN_COLUMNS, SPAN_DTYPE

TEXT = ("Title\n\nFirst paragraph, with a clause; and a sentence. 中文。\n\n" * 40).strip()


def _tree() -> _core.Tree:
    return HierarchicalChunker(sizes=[120, 40, 12])._tree


def test_the_dtype_is_the_record_layout() -> None:
    table = _tree().spans(TEXT)
    assert table.dtype == SPAN_DTYPE
    assert table.dtype.itemsize == 8 * len(SPAN_COLUMNS)
    assert [table.dtype.fields[name][1] for name in SPAN_COLUMNS] == list(
        range(0, 8 * len(SPAN_COLUMNS), 8)
    )
    assert table.ctypes.data % 8 == 0
    assert table.flags.c_contiguous and table.flags.owndata is False
    # The structured rows and the plain (n, 7) view are the same memory.
    flat = table.view(np.int64).reshape(-1, len(SPAN_COLUMNS))
    assert flat[:, 3].tolist() == table["start_byte"].tolist()


def test_a_table_outlives_its_chunker_and_tree() -> None:
    chunker = ParentChildChunker(parent_size=80, child_size=20)
    table = chunker.spans(TEXT)
    expected = table.tolist()
    view = table[1::3]
    field = table["end_char"]
    expected_view, expected_field = view.tolist(), field.tolist()
    del chunker, table
    gc.collect()
    # Memory freed and reused here would show as changed rows.
    for _ in range(50):
        _tree().spans(TEXT[::-1])
    assert view.tolist() == expected_view
    assert field.tolist() == expected_field
    assert view.base is not None
    assert np.lib.stride_tricks.as_strided(field, shape=(1,)).tolist() == expected_field[:1]
    del view
    gc.collect()
    assert field.tolist() == expected_field
    assert expected  # the whole table held rows


def test_tables_made_on_threads_outlive_their_calls() -> None:
    tree = _tree()
    texts = [TEXT[: 100 * n] for n in range(1, 20)]
    many = tree.spans_many(texts, workers=4)
    with ThreadPoolExecutor(4) as pool:
        alone = list(pool.map(tree.spans, texts))
    del tree
    gc.collect()
    assert [table.tolist() for table in many] == [table.tolist() for table in alone]


def test_tables_and_their_slices_pickle() -> None:
    table = _tree().spans(TEXT)
    for part in (table, table[::2], table[5:9], table[["start_byte", "end_byte"]]):
        restored = pickle.loads(pickle.dumps(part))
        assert restored.dtype == part.dtype
        assert restored.tolist() == part.tolist()


def test_a_table_can_be_written_and_the_core_keeps_its_own() -> None:
    tree = _tree()
    table = tree.spans(TEXT)
    table["start_byte"] = -1
    assert tree.spans(TEXT)["start_byte"].min() == 0


def _misaligned(array: np.ndarray) -> np.ndarray:
    """``array`` as int64 memory one byte off an 8-byte boundary."""
    array = np.ascontiguousarray(array, dtype=np.int64)
    raw = np.zeros(array.nbytes + 1, dtype=np.uint8)
    moved = raw[1:].view(np.int64).reshape(array.shape)
    moved[...] = array
    assert moved.size == 0 or moved.ctypes.data % 8 != 0
    return moved


def test_misaligned_arrays_are_read_as_aligned_ones() -> None:
    tree = _tree()
    table = tree.spans(TEXT)
    flat = table.view(np.int64).reshape(-1, len(SPAN_COLUMNS))
    odd = _misaligned(flat)
    fingerprint = "f" * 16
    assert _core.chunk_ids(TEXT, "doc", fingerprint, odd) == _core.chunk_ids(
        TEXT, "doc", fingerprint, flat
    )
    built = _core.build_chunks(TEXT, "doc", fingerprint, None, odd)
    assert [chunk.text for chunk in built] == [
        chunk.text for chunk in _core.build_chunks(TEXT, "doc", fingerprint, None, flat)
    ]
    chars = flat[:, 5:7]
    assert (
        _core.char_spans_to_bytes(TEXT, _misaligned(chars)).tolist()
        == _core.char_spans_to_bytes(TEXT, np.ascontiguousarray(chars)).tolist()
    )
    splitter = _core.Splitter(12)
    parents = np.ascontiguousarray(flat[flat[:, 0] == flat[:, 0].max()][:, 3:5])
    assert (
        _core.level_spans(splitter, TEXT, _misaligned(parents)).tolist()
        == _core.level_spans(splitter, TEXT, parents).tolist()
    )
    # Empty, and non-contiguous (a column slice of a misaligned array).
    assert _core.chunk_ids(TEXT, "doc", fingerprint, _misaligned(flat[:0])) == []
    assert (
        _core.char_spans_to_bytes(TEXT, _misaligned(flat)[:, 5:7]).tolist()
        == _core.char_spans_to_bytes(TEXT, np.ascontiguousarray(chars)).tolist()
    )
