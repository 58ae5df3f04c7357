"""memo_core.model.onnx_bert: a Q4Model written as an int8 ONNX graph onnxruntime runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import numpy_helper
from tinyq4 import OUTLIER_CHANNEL, ref_embed, ref_tokenize, write_q4bin

from memo_core.model.onnx_bert import (
    CALIBRATION,
    MS_DOMAIN,
    WEIGHT_LIMIT,
    build_onnx,
    int7_channels,
    smoothing,
    write_onnx,
)
from memo_core.model.q4bin import QK, Q4Model, Q4Tensor, load_q4bin

TEXTS = ["the server back up", "при вет мир ёлка", "note", "the note up back server"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Q4Model:
    return load_q4bin(write_q4bin(tmp_path_factory.mktemp("bert") / "tiny.bin"))


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _embed(session: ort.InferenceSession, m: Q4Model, texts: list[str]) -> np.ndarray:
    """Mean-pooled, unit states of each `passage: ` text, one run each (no padding)."""
    rows = []
    for t in texts:
        ids = np.array([ref_tokenize(m, "passage: " + t)], dtype=np.int64)
        rows.append(session.run(["last_hidden_state"], {"input_ids": ids})[0][0].mean(axis=0))
    out = np.array(rows)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def _q4(rows: int, cols: int, seed: int = 0) -> Q4Tensor:
    rng = np.random.default_rng(seed)
    return Q4Tensor(
        scales=rng.uniform(0.01, 0.1, (rows, cols // QK)).astype(np.float32),
        nibbles=rng.integers(0, 256, (rows, cols // QK, QK // 2), dtype=np.uint8),
    )


def test_int7_channels_are_within_the_limit_with_a_scale_a_row() -> None:
    w = _q4(5, 64)
    codes, scales = int7_channels(w)
    assert codes.dtype == np.int8 and codes.shape == (5, 64)
    assert scales.dtype == np.float32 and scales.shape == (5,)
    assert np.abs(codes).max() == WEIGHT_LIMIT  # each row's largest weight takes the top code
    assert np.all(np.abs(codes).max(axis=1) == WEIGHT_LIMIT)
    dense = w.dequantize()
    assert np.abs(codes * scales[:, None] - dense).max() <= scales.max() / 2 + 1e-7


def test_int7_channels_multiply_the_columns_first() -> None:
    w = _q4(3, 32, seed=1)
    columns = np.ones(32, np.float32)
    columns[7] = 4.0
    codes, scales = int7_channels(w, columns)
    want = w.dequantize() * columns[None, :]
    assert np.abs(codes * scales[:, None] - want).max() <= scales.max() / 2 + 1e-7


def test_a_zero_row_gets_scale_one_and_zero_codes() -> None:
    w = Q4Tensor(
        scales=np.array([[0.0], [0.5]], np.float32),
        nibbles=np.full((2, 1, 16), 0x9A, np.uint8),
    )
    codes, scales = int7_channels(w)
    assert scales[0] == 1.0 and not codes[0].any()
    assert scales[1] > 0 and codes[1].any()


def test_the_graph_is_int8_products_over_a_4_bit_lookup(tiny: Q4Model) -> None:
    model = build_onnx(tiny)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("DynamicQuantizeMatMul") == 4 * tiny.layers  # qkv, ao, fi, fo
    assert ops.count("MultiHeadAttention") == tiny.layers
    assert ops.count("GatherBlockQuantized") == 1
    assert "MatMul" not in ops  # every product in int8
    assert {o.domain for o in model.opset_import} == {"", MS_DOMAIN}
    assert [i.name for i in model.graph.input] == ["input_ids"]
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]
    weights = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DynamicQuantizeMatMul":
            w = weights[node.input[1]]
            assert w.dtype == np.int8 and np.abs(w).max() <= WEIGHT_LIMIT


@pytest.mark.parametrize("tokens", [1, 5, 24])
def test_the_graph_runs_any_length_up_to_the_positions(tiny: Q4Model, tokens: int) -> None:
    session = _session(build_onnx(tiny))
    ids = np.arange(4, 4 + tokens, dtype=np.int64)[None, :]
    (out,) = session.run(None, {"input_ids": ids})
    assert out.shape == (1, tokens, tiny.hidden) and np.isfinite(out).all()


def test_the_graph_embeds_as_the_reference_in_int8(tiny: Q4Model) -> None:
    got = _embed(_session(build_onnx(tiny)), tiny, TEXTS)
    want = ref_embed(tiny, TEXTS, int8=True)
    assert (got * want).sum(axis=1).min() > 0.999


def test_a_probe_graph_outputs_each_layers_gelu(tiny: Q4Model) -> None:
    model = build_onnx(tiny, probe=True)
    names = [o.name for o in model.graph.output]
    assert names == ["last_hidden_state"] + [f"gelu_{i}" for i in range(tiny.layers)]
    outs = _session(model).run(None, {"input_ids": np.array([[0, 5, 6, 2]], np.int64)})
    assert [o.shape for o in outs[1:]] == [(1, 4, tiny.ffn)] * tiny.layers


def test_a_model_without_an_outlier_needs_no_smoothing(tiny: Q4Model) -> None:
    factors = smoothing(tiny, [[0, 5, 6, 2], [0, 7, 8, 9, 2]])
    assert len(factors) == tiny.layers
    assert all(f.shape == (tiny.ffn,) and np.all(f == 1.0) for f in factors)


def test_an_outlier_is_divided_by_a_power_of_two_and_the_graph_stays_the_model(
    tmp_path: Path,
) -> None:
    m = load_q4bin(write_q4bin(tmp_path / "outlier.bin", outlier=80.0))
    texts = [ref_tokenize(m, t)[: m.max_positions] for t in CALIBRATION]
    factors = smoothing(m, texts)
    assert factors[0][OUTLIER_CHANNEL] >= 8
    assert np.count_nonzero(factors[0] != 1.0) == 1 and np.all(factors[1] == 1.0)
    assert np.all(np.log2(factors[0]) % 1 == 0)  # powers of two: the same on every CPU
    smoothed = _embed(_session(build_onnx(m, factors)), m, TEXTS)
    assert (smoothed * ref_embed(m, TEXTS)).sum(axis=1).min() > 0.999


def test_write_onnx_saves_the_smoothed_graph(tiny: Q4Model, tmp_path: Path) -> None:
    path = tmp_path / "model.onnx"
    write_onnx(tiny, path, [[0, 5, 6, 2]])
    saved = onnx.load(str(path))
    onnx.checker.check_model(saved)
    got = _embed(ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]), tiny, TEXTS)
    assert np.allclose(got, _embed(_session(build_onnx(tiny)), tiny, TEXTS), atol=1e-6)
