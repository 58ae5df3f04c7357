"""Export a Hugging Face text encoder to a memo model directory (ONNX + tokenizer + config).

    python models/export_hf.py MODEL_NAME_OR_PATH OUT_DIR [--kind bert|siglip]
        [--pooling mean|cls] [--max-length N] [--query-prefix P] [--passage-prefix P]
        [--lowercase] [--id ID]

Needs the `export` extra (transformers, torch, onnx). MODEL_NAME_OR_PATH is whatever
`from_pretrained` accepts: a local folder, or a hub name that transformers may download here,
at export time; memo itself never downloads. See models/README.md for the directory contract.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from pathlib import Path
from typing import Any

OPSET = 17


def _load_tokenizer(name: str) -> tuple[Any, Any]:
    """The transformers tokenizer (for pad id, input names) and its `tokenizers` backend."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(name)
    if getattr(tok, "is_fast", False):
        return tok, tok.backend_tokenizer
    # memo reads tokenizer.json only; e.g. SigLIP (v1) ships just a sentencepiece model.
    from transformers.convert_slow_tokenizer import convert_slow_tokenizer

    return tok, convert_slow_tokenizer(tok)


def _load_model(name: str) -> Any:
    import transformers

    # Eager attention traces into plain ONNX ops; SDPA/flash kernels may not export.
    try:
        return transformers.AutoModel.from_pretrained(name, attn_implementation="eager").eval()
    except ValueError:
        # AutoModel does not map text towers saved alone (SiglipTextModel, Siglip2TextModel);
        # the class name saved in config.json does.
        config = transformers.AutoConfig.from_pretrained(name)
        arch = (getattr(config, "architectures", None) or [""])[0]
        cls = getattr(transformers, arch, None)
        if cls is None:
            raise
        return cls.from_pretrained(name, attn_implementation="eager").eval()


def export(
    model: str,
    out_dir: str | Path,
    *,
    kind: str = "bert",
    pooling: str = "mean",
    max_length: int | None = None,
    query_prefix: str = "",
    passage_prefix: str = "",
    lowercase: bool = False,
    model_id: str | None = None,
    batch_size: int = 16,
) -> Path:
    """Write OUT_DIR/{model.onnx, tokenizer.json, memo-model.json}; returns OUT_DIR."""
    import torch

    if kind not in ("bert", "siglip"):
        raise ValueError(f"kind must be 'bert' or 'siglip', not {kind!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tok, backend = _load_tokenizer(model)
    hf = _load_model(model)
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else 0

    if kind == "bert":
        accepted = inspect.signature(hf.forward).parameters
        names = ["input_ids", "attention_mask"]
        if "token_type_ids" in accepted:  # zeros for one text, as transformers defaults them
            names.append("token_type_ids")
        limit = getattr(hf.config, "max_position_embeddings", 512)
        length = max_length or min(512, limit, tok.model_max_length)
        sample = dict(tok(["memo exports a model", "hi"], padding=True, return_tensors="pt"))
        sample.setdefault("token_type_ids", torch.zeros_like(sample["input_ids"]))
        output, padding = "last_hidden_state", "longest"

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = hf

            def forward(self, *args: Any) -> Any:
                return self.m(**dict(zip(names, args, strict=True))).last_hidden_state

        dynamic = {n: {0: "batch", 1: "seq"} for n in [*names, output]}
    else:
        # SigLIP pools the last position, so it only works with padding to the trained length.
        text = getattr(hf, "text_model", hf)
        cfg = getattr(hf.config, "text_config", hf.config)
        length = max_length or getattr(cfg, "max_position_embeddings", 64)
        names, output, padding, pooling = ["input_ids"], "pooler_output", "max_length", "pooled"
        sample = tok(
            ["memo exports a model", "hi"],
            padding="max_length",
            max_length=length,
            truncation=True,
            return_tensors="pt",
        )

        class Wrapper(torch.nn.Module):  # type: ignore[no-redef]
            def __init__(self) -> None:
                super().__init__()
                self.m = text

            def forward(self, input_ids: Any) -> Any:
                return self.m(input_ids=input_ids).pooler_output

        dynamic = {"input_ids": {0: "batch"}, output: {0: "batch"}}

    wrapper = Wrapper().eval()
    args = tuple(sample[n] for n in names)
    with torch.no_grad():
        dim = int(wrapper(*args).shape[-1])
        # The TorchScript exporter (dynamo=False) needs no onnxscript and keeps the names.
        torch.onnx.export(
            wrapper,
            args,
            str(out / "model.onnx"),
            input_names=names,
            output_names=[output],
            dynamic_axes=dynamic,
            opset_version=OPSET,
            do_constant_folding=True,
            dynamo=False,
        )
    backend.save(str(out / "tokenizer.json"))
    config = {
        "format": 1,
        "id": model_id or Path(model.rstrip("/")).name,
        "kind": kind,
        "onnx": "model.onnx",
        "tokenizer": "tokenizer.json",
        "dim": dim,
        "max_length": int(length),
        "padding": padding,
        "pooling": pooling,
        "normalize": True,
        "lowercase": lowercase,
        "query_prefix": query_prefix,
        "passage_prefix": passage_prefix,
        "pad_id": int(pad_id),
        "inputs": {n: n for n in names},
        "output": output,
        "batch_size": batch_size,
        "source": model,
    }
    (out / "memo-model.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="Hugging Face model name or local folder")
    p.add_argument("out_dir", type=Path)
    p.add_argument("--kind", choices=["bert", "siglip"], default="bert")
    p.add_argument("--pooling", choices=["mean", "cls"], default="mean", help="bert only")
    p.add_argument("--max-length", type=int, default=None)
    p.add_argument("--query-prefix", default="")
    p.add_argument("--passage-prefix", default="")
    p.add_argument("--lowercase", action="store_true", help="lower-case texts (SigLIP2)")
    p.add_argument("--id", dest="model_id", default=None)
    p.add_argument("--batch-size", type=int, default=16)
    a = p.parse_args(argv)
    out = export(
        a.model,
        a.out_dir,
        kind=a.kind,
        pooling=a.pooling,
        max_length=a.max_length,
        query_prefix=a.query_prefix,
        passage_prefix=a.passage_prefix,
        lowercase=a.lowercase,
        model_id=a.model_id,
        batch_size=a.batch_size,
    )
    print(f"wrote {out}; try it with MEMO_MODEL_DIR={out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
