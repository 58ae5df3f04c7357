"""models/export_hf.py on tiny randomly initialised models: ONNX vectors == PyTorch vectors."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tinymodels import build_vocab, make_tokenizer  # noqa: E402

from memo_core.model.onnx_embedder import load_model_dir  # noqa: E402

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["how to configure backup", "linux server", "the cat and the dog in the rain", "x"]


def _export_module():
    # models/ is not a package; load the script by path, as a user would run it.
    spec = importlib.util.spec_from_file_location("export_hf", ROOT / "models" / "export_hf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _save_tokenizer(folder: Path, *, bert: bool, max_length: int):
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=make_tokenizer(build_vocab(), bert=bert),
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=max_length,
    )
    tok.save_pretrained(folder)
    return tok


def _unit(x) -> np.ndarray:
    x = x.detach().numpy()
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _check(onnx_vecs: np.ndarray, torch_vecs: np.ndarray) -> None:
    cos = (onnx_vecs * torch_vecs).sum(axis=1)
    assert cos.min() >= 0.999, cos
    np.testing.assert_allclose(onnx_vecs, torch_vecs, atol=1e-3)
    # the texts differ from each other, so a wrong pooling could not pass by accident
    assert (torch_vecs @ torch_vecs.T)[np.triu_indices(len(torch_vecs), 1)].max() < 0.99


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_export_bert(tmp_path, pooling):
    src = tmp_path / "bert-src"
    config = transformers.BertConfig(
        vocab_size=len(build_vocab()),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        initializer_range=0.5,
    )
    torch.manual_seed(0)
    model = transformers.BertModel(config).eval()
    model.save_pretrained(src)
    tok = _save_tokenizer(src, bert=True, max_length=64)

    out = _export_module().export(
        str(src), tmp_path / "out", kind="bert", pooling=pooling, query_prefix="query: "
    )
    cfg = json.loads((out / "memo-model.json").read_text())
    assert cfg["kind"] == "bert" and cfg["dim"] == 32 and cfg["query_prefix"] == "query: "
    assert "token_type_ids" in cfg["inputs"] and cfg["max_length"] == 64

    enc = tok(TEXTS, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**enc).last_hidden_state
    if pooling == "cls":
        want = _unit(hidden[:, 0])
    else:
        m = enc["attention_mask"].unsqueeze(-1).float()
        want = _unit((hidden * m).sum(1) / m.sum(1))
    _check(load_model_dir(out).embed(TEXTS), want)


@pytest.mark.parametrize("family", ["siglip", "siglip2"])
def test_export_siglip_text_tower(tmp_path, family):
    src = tmp_path / f"{family}-src"
    classes = {
        "siglip": ("SiglipTextConfig", "SiglipTextModel"),
        "siglip2": ("Siglip2TextConfig", "Siglip2TextModel"),
    }[family]
    if not hasattr(transformers, classes[1]):
        pytest.skip(f"transformers {transformers.__version__} has no {classes[1]}")
    vocab = build_vocab()
    config = getattr(transformers, classes[0])(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=16,
        pad_token_id=vocab["[PAD]"],
    )
    torch.manual_seed(0)
    model = getattr(transformers, classes[1])(config).eval()
    model.save_pretrained(src)
    tok = _save_tokenizer(src, bert=False, max_length=16)

    out = _export_module().export(str(src), tmp_path / "out", kind="siglip")
    cfg = json.loads((out / "memo-model.json").read_text())
    assert (
        cfg["kind"] == "siglip"
        and cfg["max_length"] == 16
        and cfg["inputs"] == {"input_ids": "input_ids"}
    )
    texts = [*TEXTS, "cat " * 30]  # longer than the fixed length: truncated
    enc = tok(texts, padding="max_length", max_length=16, truncation=True, return_tensors="pt")
    with torch.no_grad():
        want = _unit(model(input_ids=enc["input_ids"]).pooler_output)
    _check(load_model_dir(out).embed(texts), want)
