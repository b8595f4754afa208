"""The retrieval benchmark's metrics, pinned by hand-computed cases (no model needed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _load() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benches" / "retrieval_metrics.py"
    spec = importlib.util.spec_from_file_location("retrieval_metrics", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


metrics = _load()


def test_union_merges_overlapping_and_touching_ranges() -> None:
    assert metrics.union_ranges([(5, 8), (0, 3), (2, 4), (8, 9), (7, 7)]) == [(0, 4), (5, 9)]
    assert metrics.total_length([(0, 10), (5, 15)]) == 15


def test_intersection_length() -> None:
    assert metrics.intersection_length([(0, 10), (20, 30)], [(5, 25)]) == 10
    assert metrics.intersection_length([(0, 10)], [(10, 20)]) == 0


def test_one_chunk_covering_the_reference() -> None:
    # Reference 10..20 (10 chars); one chunk 0..40 retrieved.
    scores = metrics.score_question([("a", 0, 40)], [(10, 20)], "a")
    assert scores.recall == 1.0
    assert scores.precision == 10 / 40
    assert scores.iou == 10 / 40


def test_partial_overlap_and_a_miss() -> None:
    # References 0..10 and 30..50 (30 chars). Chunks 5..15 (5 shared) and 60..70 (none).
    scores = metrics.score_question([("a", 5, 15), ("a", 60, 70)], [(0, 10), (30, 50)], "a")
    assert scores.recall == pytest.approx(5 / 30)
    assert scores.precision == pytest.approx(5 / 20)
    # Union: 0..15 (15) + 30..50 (20) + 60..70 (10) = 45.
    assert scores.iou == pytest.approx(5 / 45)


def test_chunks_of_another_corpus_are_noise() -> None:
    # The same offsets in corpus "b" share nothing with the reference in "a".
    scores = metrics.score_question([("b", 10, 20), ("a", 10, 20)], [(10, 20)], "a")
    assert scores.recall == 1.0
    assert scores.precision == 0.5
    assert scores.iou == 0.5


def test_overlapping_chunks_count_once_unless_summed() -> None:
    retrieved = [("a", 0, 20), ("a", 10, 30)]
    references = [(10, 20)]
    as_set = metrics.score_question(retrieved, references, "a")
    assert as_set.precision == pytest.approx(10 / 30)
    assert as_set.iou == pytest.approx(10 / 30)
    summed = metrics.score_question(retrieved, references, "a", summed=True)
    assert summed.recall == 1.0
    assert summed.precision == pytest.approx(10 / 40)
    assert summed.iou == pytest.approx(10 / 40)


def test_nothing_retrieved() -> None:
    scores = metrics.score_question([], [(0, 10)], "a")
    assert (scores.recall, scores.precision, scores.iou) == (0.0, 0.0, 0.0)


def test_precision_omega_takes_every_chunk_touching_a_reference() -> None:
    chunks = [(0, 10), (10, 20), (20, 30), (30, 40)]
    # Reference 15..25 touches chunks 10..20 and 20..30: 10 shared of 20.
    assert metrics.precision_omega(chunks, [(15, 25)]) == pytest.approx(10 / 20)
    # A reference partly in no chunk (a gap 40..44) adds its uncovered part below the line.
    assert metrics.precision_omega(chunks, [(35, 44)]) == pytest.approx(5 / 14)


def test_mean() -> None:
    assert metrics.mean([0.0, 1.0, 0.5]) == 0.5
    assert metrics.mean([]) == 0.0


def test_reading_joins_spans_across_whitespace_only() -> None:
    text = "One. Two.\n\nThree four five. Six"
    assert metrics.joined_spans(text, [(0, 4), (5, 9), (17, 21)]) == [(0, 9), (17, 21)]
    assert metrics.joined_spans(text, [(0, 9), (11, 16)]) == [(0, 16)]  # a blank line between


def test_span_ends_on_a_sentence_or_paragraph_end() -> None:
    text = 'He said "yes." Then\nno more words here and (this.) end'
    assert metrics.ends_cleanly(text, 14)  # after the closing quote of a sentence
    assert metrics.ends_cleanly(text, 19)  # a line break follows
    assert not metrics.ends_cleanly(text, 17)  # inside a word
    assert metrics.ends_cleanly(text, 49)  # "(this.)"
    assert metrics.ends_cleanly(text, len(text))  # the end of the text
    assert not metrics.ends_cleanly(text, 43)


def test_reading_counts_spans_and_clean_ends_per_context() -> None:
    texts = {"a": "One. Two three. Four", "b": "Five six."}
    contexts = [[("a", 0, 4), ("a", 5, 15), ("b", 0, 4)], [("a", 5, 9)]]
    spans, share = metrics.reading(texts, contexts)
    assert spans == (2 + 1) / 2  # (a: one joined span, b: one) and one
    assert share == 1 / 3  # "One. Two three." ends cleanly; "Five" and "Two" do not
