"""all-MiniLM-L6-v2 as an fp32 ONNX graph, written from the same safetensors weights the numpy
forward pass reads (``retrieval_embed.NumpyMiniLM``): no PyTorch, no download, no export tool.

The graph is the BERT encoder node by node, as the numpy pass computes it: embeddings (word +
position + token type 0) and LayerNorm; six layers of 12-head self-attention (an additive
mask of -1e9 on padding), residual + LayerNorm, a GELU feed-forward (exact, through ``Erf``),
residual + LayerNorm. Its output is the last hidden state; pooling stays in numpy
(``retrieval_embed._pool``), shared by both routes. onnxruntime fuses the LayerNorm, GELU and
attention patterns itself (graph optimisation level "all").

The file is built once into ``benches/.cache/`` (about 90 MB, the weights as initializers),
named by the SHA-256 of the weights file, so new weights give a new graph.

Performance notes: on two shared cores, onnxruntime with two intra-op threads embeds the
benchmark's texts several times faster than the numpy pass on one OpenBLAS thread (the
fused kernels, and no Python between layers); the cold run's time is in
``benches/results/retrieval.md``.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

import numpy as np

_HEADS = 12
_LAYERS = 6
_EPS = 1e-12
OPSET = 17  # LayerNormalization


def _weights_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def build_graph(weights: dict[str, np.ndarray]) -> Any:  # noqa: PLR0915 - one encoder, read top down
    """The ONNX model (``onnx.ModelProto``) of the encoder for these weights.

    Inputs ``input_ids`` (int64, batch x width) and ``attention_mask`` (float32, 1 on word
    pieces, 0 on padding); output ``hidden`` (float32, batch x width x 384).
    """
    import onnx  # noqa: PLC0415 - an optional benchmark dependency
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415

    nodes: list[Any] = []
    initializers: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        return output

    def weight(name: str) -> str:
        return const(name, weights[name].astype(np.float32))

    def linear(x: str, prefix: str, out: str) -> str:
        # Stored (out, in): the graph multiplies by the transpose, kept as an initializer.
        matrix = const(prefix + ".weight.T", weights[prefix + ".weight"].T.astype(np.float32))
        product = node("MatMul", [x, matrix], out + ".matmul")
        return node("Add", [product, weight(prefix + ".bias")], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node(
            "LayerNormalization",
            [x, weight(prefix + ".weight"), weight(prefix + ".bias")],
            out,
            axis=-1,
            epsilon=_EPS,
        )

    hidden_size = weights["embeddings.word_embeddings.weight"].shape[1]
    head_size = hidden_size // _HEADS
    # Embeddings: word + position[:width] + token type 0.
    words = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "words")
    shape = node("Shape", ["input_ids"], "ids_shape")
    width = node("Slice", [shape, const("one", np.array([1])), const("two", np.array([2]))], "w")
    positions = node(
        "Slice",
        [weight("embeddings.position_embeddings.weight"), const("zero", np.array([0])), width],
        "positions",
    )
    token_type = const(
        "token_type_0", weights["embeddings.token_type_embeddings.weight"][0].astype(np.float32)
    )
    summed = node("Add", [node("Add", [words, positions], "words_positions"), token_type], "emb")
    hidden = layer_norm(summed, "embeddings.LayerNorm", "embedded")
    # Additive mask, batch x 1 x 1 x width: 0 on word pieces, -1e9 on padding.
    inverted = node("Sub", [const("ones", np.array(1.0, np.float32)), "attention_mask"], "inv")
    scaled = node("Mul", [inverted, const("minus_big", np.array(-1e9, np.float32))], "neg")
    additive = node("Unsqueeze", [scaled, const("axes_12", np.array([1, 2]))], "additive")
    split_heads = const("split_heads", np.array([0, 0, _HEADS, head_size]))
    join_heads = const("join_heads", np.array([0, 0, hidden_size]))
    scale = const("scale", np.array(1.0 / math.sqrt(head_size), np.float32))
    root_half = const("root_half", np.array(1.0 / math.sqrt(2.0), np.float32))
    half = const("half", np.array(0.5, np.float32))
    for layer in range(_LAYERS):
        p = f"encoder.layer.{layer}."
        q = f"l{layer}."

        def heads(x: str, perm: list[int], out: str) -> str:
            return node(
                "Transpose", [node("Reshape", [x, split_heads], out + ".r")], out, perm=perm
            )

        query = heads(linear(hidden, p + "attention.self.query", q + "q"), [0, 2, 1, 3], q + "qh")
        key = heads(linear(hidden, p + "attention.self.key", q + "k"), [0, 2, 3, 1], q + "kh")
        value = heads(linear(hidden, p + "attention.self.value", q + "v"), [0, 2, 1, 3], q + "vh")
        scores = node("Mul", [node("MatMul", [query, key], q + "qk"), scale], q + "scaled")
        probs = node("Softmax", [node("Add", [scores, additive], q + "masked")], q + "p", axis=-1)
        context = node("MatMul", [probs, value], q + "ctx")
        context = node(
            "Reshape",
            [node("Transpose", [context], q + "ctx.t", perm=[0, 2, 1, 3]), join_heads],
            q + "ctx.r",
        )
        attended = linear(context, p + "attention.output.dense", q + "attended")
        hidden = layer_norm(
            node("Add", [attended, hidden], q + "res1"), p + "attention.output.LayerNorm", q + "h1"
        )
        inner = linear(hidden, p + "intermediate.dense", q + "inner")
        erf = node("Erf", [node("Mul", [inner, root_half], q + "inner.s")], q + "erf")
        gate = node("Add", [erf, const(q + "one", np.array(1.0, np.float32))], q + "gate")
        gelu = node("Mul", [node("Mul", [inner, half], q + "halved"), gate], q + "gelu")
        out = linear(gelu, p + "output.dense", q + "out")
        hidden = layer_norm(
            node("Add", [out, hidden], q + "res2"), p + "output.LayerNorm", q + "h2"
        )
    nodes.append(helper.make_node("Identity", [hidden], ["hidden"], name="hidden"))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "width"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.FLOAT, ["batch", "width"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "width", 384])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def graph_path(weights_path: Path, cache_dir: Path) -> Path:
    """The ONNX file for ``weights_path`` in ``cache_dir``, written first if it is not there."""
    path = cache_dir / f"minilm-fp32-{_weights_digest(weights_path)}.onnx"
    if not path.exists():
        from safetensors.numpy import load_file  # noqa: PLC0415

        model = build_graph(load_file(str(weights_path)))
        cache_dir.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(model.SerializeToString())
        temporary.replace(path)
    return path
