"""Tiny model directories built in-process (onnx.helper + tokenizers), for tests.

Public:
- `make_tiny_model_dir(path, kind="bert", dim=16, words=()) -> Path`: a working model directory
  whose vectors mean something: each word has a fixed random vector and a text is the mean of
  its words, so texts that share words are closer than texts that do not. Words outside the
  vocabulary (`DEFAULT_WORDS` + `words`) embed to zero; pass the words of your notes.
- Lower-level builders used by tests/memo_core/model/test_embedder.py: `build_vocab`,
  `make_tokenizer`, `token_table`, `bert_graph`, `siglip_graph`, `write_model_dir`, and numpy
  references `ref_bert` / `ref_siglip` that compute what the graphs compute.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

__all__ = [
    "DEFAULT_WORDS",
    "SPECIALS",
    "bert_graph",
    "build_vocab",
    "make_tiny_model_dir",
    "make_tokenizer",
    "ref_bert",
    "ref_siglip",
    "siglip_graph",
    "token_table",
    "write_model_dir",
]

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
DEFAULT_WORDS = (
    "a an the of to in on for with and or not is are be how what why when where this that it "
    "query passage note notes file files text search index find "
    "configure setup install backup restore server linux windows docker git python database "
    "network password user disk memory error log test build release deploy config "
    "cat dog bird fish apple banana soup recipe cook borscht weather rain sun "
    "как что где настроить установить бэкап сервер сеть пароль ошибка рецепт борщ суп кошка "
    "собака погода дождь заметка поиск файл"
).split()
OPSET = 17


def build_vocab(words: Iterable[str] = ()) -> dict[str, int]:
    """Specials first (ids 0-3), then DEFAULT_WORDS and `words`, lower-cased, deduplicated."""
    vocab = {tok: i for i, tok in enumerate(SPECIALS)}
    for w in [*DEFAULT_WORDS, *words]:
        vocab.setdefault(w.lower(), len(vocab))
    return vocab


def make_tokenizer(vocab: dict[str, int], *, bert: bool = True) -> Tokenizer:
    """WordLevel, lower-case, Whitespace; post-processor "[CLS] $A [SEP]" (bert) or "$A [SEP]"."""
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    sep = ("[SEP]", vocab["[SEP]"])
    if bert:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", vocab["[CLS]"]), sep],
        )
    else:
        tok.post_processor = processors.TemplateProcessing(single="$A [SEP]", special_tokens=[sep])
    tok.enable_padding(pad_id=vocab["[PAD]"], pad_token="[PAD]")  # the embedder reads pad_id
    return tok


def token_table(vocab_size: int, dim: int, seed: int = 0, zero_specials: bool = False):
    """Deterministic random embedding rows; `zero_specials` zeroes [PAD]/[UNK]/[CLS]/[SEP]."""
    table = np.random.default_rng(seed).standard_normal((vocab_size, dim)).astype(np.float32)
    if zero_specials:
        table[: len(SPECIALS)] = 0.0
    return table


def _model(nodes, inputs, outputs, inits) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "tiny", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # readable by any onnxruntime >= 1.17
    onnx.checker.check_model(model)
    return model


def bert_graph(
    table: np.ndarray,
    *,
    mask_vec: np.ndarray | None = None,
    type_table: np.ndarray | None = None,
    output_2d: bool = False,
) -> onnx.ModelProto:
    """h = E[ids] (+ T[types]) + mask*mask_vec + masked_mean(E[ids]...); output h (N,L,D).

    The masked-mean context term mixes tokens the way attention does, so position 0 (CLS)
    depends on the whole text but not on padding. `output_2d` outputs just the context (N,D).
    """
    dim = table.shape[1]
    mask_vec = np.zeros(dim, np.float32) if mask_vec is None else mask_vec
    ints = TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info("input_ids", ints, ["batch", "seq"]),
        helper.make_tensor_value_info("attention_mask", ints, ["batch", "seq"]),
    ]
    inits = [
        numpy_helper.from_array(table, "E"),
        numpy_helper.from_array(mask_vec.astype(np.float32), "mask_vec"),
        numpy_helper.from_array(np.array([2], np.int64), "ax2"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
    ]
    nodes = [helper.make_node("Gather", ["E", "input_ids"], ["emb0"])]
    emb = "emb0"
    if type_table is not None:
        inputs.append(helper.make_tensor_value_info("token_type_ids", ints, ["batch", "seq"]))
        inits.append(numpy_helper.from_array(type_table, "T"))
        nodes += [
            helper.make_node("Gather", ["T", "token_type_ids"], ["temb"]),
            helper.make_node("Add", ["emb0", "temb"], ["emb1"]),
        ]
        emb = "emb1"
    nodes += [
        helper.make_node("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["maskf", "ax2"], ["m"]),  # (N,L,1)
        helper.make_node("Mul", ["m", "mask_vec"], ["mv"]),
        helper.make_node("Add", [emb, "mv"], ["tok"]),
        helper.make_node("Mul", ["tok", "m"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "ax1"], ["s"], keepdims=1),  # (N,1,D)
        helper.make_node("ReduceSum", ["m", "ax1"], ["c"], keepdims=1),  # (N,1,1)
        helper.make_node("Max", ["c", "one"], ["c1"]),
        helper.make_node("Div", ["s", "c1"], ["ctx"]),
    ]
    if output_2d:
        nodes.append(helper.make_node("Squeeze", ["ctx", "ax1"], ["sentence_embedding"]))
        out = helper.make_tensor_value_info("sentence_embedding", TensorProto.FLOAT, ["b", dim])
    else:
        nodes.append(helper.make_node("Add", ["tok", "ctx"], ["last_hidden_state"]))
        out = helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["batch", "seq", dim]
        )
    return _model(nodes, inputs, [out], inits)


def siglip_graph(table: np.ndarray, max_length: int, *, pool: str = "mean") -> onnx.ModelProto:
    """input_ids (N, max_length) only -> pooler_output (N,D): mask-free mean, or position 0.

    The fixed sequence length is part of the input's shape: feeding any other length fails,
    and the mask-free mean makes the vector depend on the pad id, as in a real SigLIP tower.
    """
    dim = table.shape[1]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["b", max_length])]
    inits = [
        numpy_helper.from_array(table, "E"),
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
    ]
    nodes = [helper.make_node("Gather", ["E", "input_ids"], ["h"])]
    if pool == "mean":
        # opset 17: ReduceMean takes axes as an attribute (ReduceSum takes them as an input)
        nodes.append(helper.make_node("ReduceMean", ["h"], ["pooler_output"], axes=[1], keepdims=0))
    else:
        nodes.append(helper.make_node("Gather", ["h", "zero"], ["pooler_output"], axis=1))
    outputs = [
        helper.make_tensor_value_info(
            "last_hidden_state", TensorProto.FLOAT, ["b", max_length, dim]
        ),
        helper.make_tensor_value_info("pooler_output", TensorProto.FLOAT, ["b", dim]),
    ]
    nodes.append(helper.make_node("Identity", ["h"], ["last_hidden_state"]))
    return _model(nodes, inputs, outputs, inits)


def write_model_dir(
    path: Path, model: onnx.ModelProto, config: dict[str, Any], tokenizer: Tokenizer | None
) -> Path:
    """Write model.onnx, memo-model.json (`config`) and tokenizer.json into `path`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path / config.get("onnx", "model.onnx")))
    if tokenizer is not None:
        tokenizer.save(str(path / config.get("tokenizer", "tokenizer.json")))
    (path / "memo-model.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


def _l2(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)


def ref_bert(
    tok: Tokenizer,
    texts: list[str],
    table: np.ndarray,
    *,
    pooling: str = "mean",
    mask_vec: np.ndarray | None = None,
    type_table: np.ndarray | None = None,
) -> np.ndarray:
    """What an OnnxEmbedder over `bert_graph` must return, one text at a time (no padding)."""
    rows = []
    for text in texts:
        enc = tok.encode(text)
        h = table[enc.ids]
        if type_table is not None:
            h = h + type_table[enc.type_ids]
        if mask_vec is not None:
            h = h + mask_vec
        h = h + h.mean(axis=0)
        rows.append(h[0] if pooling == "cls" else h.mean(axis=0))
    return _l2(np.array(rows, np.float32))


def ref_siglip(
    tok: Tokenizer, texts: list[str], table: np.ndarray, max_length: int, pad_id: int, pool="mean"
) -> np.ndarray:
    """What an OnnxEmbedder over `siglip_graph` must return: pad to max_length with pad_id."""
    tok = Tokenizer.from_str(tok.to_str())
    tok.enable_truncation(max_length)  # cuts the words and keeps the post-processor's [SEP]
    rows = []
    for text in texts:
        ids = tok.encode(text).ids
        ids = ids + [pad_id] * (max_length - len(ids))
        h = table[ids]
        rows.append(h.mean(axis=0) if pool == "mean" else h[0])
    return _l2(np.array(rows, np.float32))


def make_tiny_model_dir(
    path: str | Path,
    kind: str = "bert",
    dim: int = 16,
    *,
    words: Iterable[str] = (),
    seed: int = 0,
    **config: Any,
) -> Path:
    """A working model directory at `path` (created); `config` overrides memo-model.json keys.

    kind "bert": mean-pooled word vectors (specials are zero, so only words count).
    kind "siglip": fixed length 32, pooled output (mean over all positions; [PAD] is zero).
    """
    vocab = build_vocab(words)
    table = token_table(len(vocab), dim, seed, zero_specials=True)
    if kind == "bert":
        model, tok = bert_graph(table), make_tokenizer(vocab, bert=True)
        cfg: dict[str, Any] = {"kind": "bert", "pooling": "mean", "max_length": 128}
    elif kind == "siglip":
        model, tok = siglip_graph(table, 32), make_tokenizer(vocab, bert=False)
        cfg = {"kind": "siglip", "max_length": 32, "output": "pooler_output"}
    else:
        raise ValueError(f"kind must be 'bert' or 'siglip', not {kind!r}")
    cfg = {"format": 1, "id": f"tiny-{kind}-{dim}", "onnx": "model.onnx", "dim": dim, **cfg}
    return write_model_dir(Path(path), model, {**cfg, **config}, tok)
