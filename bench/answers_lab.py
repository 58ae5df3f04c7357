"""The answers lab: every lever of "Answers, round 3" tried offline on many sets at once.

    python bench/answers_lab.py [--sets scifact,office,real] [--split train|test|all]
        [--pages 1500] [--report levers,stacks,look,depth,agree,fusion,floor,floors,sentmodel]

For each set the engine's index is built once (words, e5-small's passage vectors), and the
lab adds, cached beside it: use-m3's passage vectors, e5's sentence vectors (the passage's
sentences, `memo_core.text.sentences`), and e5 vectors of passages with their note's title.
For each query it keeps the engine's word candidates and the statistics the engine reads,
and each model's cosine to every passage. Then each lever (and their stacks) ranks every
query the way the engine would, and nDCG@10 (files in the order of their first passage),
the right page first and in the top 3 are compared with today's policy, with the paired
95 % interval of the per-query differences.

Sets: SciFact (its split), office-dev titles and sentences in four directions (crossling.py's
split, `--pages` pages a language), and the real question sets of bench/realsets/ (every
question; `--split` halves them by id). Gibberish of several kinds (not memo's own
made-up strings) for the floor.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import crossling  # noqa: E402
import realsets  # noqa: E402

BENCH = Path(__file__).resolve().parent
CANDIDATES = 200
MODELS = Path.home() / ".cache/memo/models"


# -- models --------------------------------------------------------------------------------


def load(path: Path):
    from memo_core.model.onnx_embedder import load_model_dir

    return load_model_dir(path)


# -- corpora -------------------------------------------------------------------------------


@dataclass
class Corpus:
    name: str
    root: Path
    ids: np.ndarray  # chunk ids, row order
    files: list[str]  # each row's note path
    heading: list[str]
    text: list[str]
    first: np.ndarray  # each row's note's first row
    e5: np.ndarray  # (n, 384) as the engine holds them
    use: np.ndarray  # (n, 512)
    sent: np.ndarray  # (m, 384) sentence vectors, grouped by row
    sent_start: np.ndarray  # (n + 1,) row r's sentences are sent[start[r]:start[r+1]]
    titled: np.ndarray  # (n, 384): e5 of the passage with its note's title where no heading has it
    row_of: dict[int, int] = field(default_factory=dict)


def _digest(parts: Sequence[str]) -> str:
    h = hashlib.blake2b(digest_size=8)
    for p in parts:
        h.update(p.encode("utf-8", "replace") + b"\x00")
    return h.hexdigest()


def _cached_array(path: Path, make: Callable[[], np.ndarray]) -> np.ndarray:
    if path.is_file():
        return np.load(path)
    arr = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, arr)
    return arr


def note_title(rel: str, front: str) -> str:
    """The note's title as a reader names it: front matter `title`, else the file name."""
    if front:
        names = json.loads(front).get("names") or []
        if names:
            return str(names[0])
    stem = rel.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    if stem in ("_index", "index", "README", "readme"):
        stem = rel.rsplit("/", 2)[-2] if "/" in rel else stem
    return stem.replace("-", " ").replace("_", " ")


def build_corpus(name: str, src: Path, args, e5, use, tuning) -> Corpus:
    from memo_core.index.indexer import embed_input
    from memo_core.index.vectors import VectorCache
    from memo_core.text.sentences import sentences

    root = C.cached_index(src, args.workdir, tuning, e5)[0]
    with C.searcher(root, e5, tuning) as s:
        [coll] = s.collections
        with C.reading(coll) as store:
            rows = list(
                store.db.execute(
                    "SELECT c.id, f.path, c.heading, c.text, f.front FROM chunks c "
                    "JOIN files f ON f.id = c.file_id ORDER BY f.path, c.seq"
                )
            )
            cache = VectorCache()
            cache.sync(store)
            vid, vecs = cache.live()
    ids = np.array([r[0] for r in rows], np.int64)
    pos = {int(c): i for i, c in enumerate(vid)}
    e5v = np.stack([vecs[pos[int(c)]] for c in ids]).astype(np.float32)
    files = [r[1] for r in rows]
    heading = [r[2] for r in rows]
    text = [r[3] for r in rows]
    first = np.zeros(len(rows), np.int64)
    seen: dict[str, int] = {}
    for i, f in enumerate(files):
        first[i] = seen.setdefault(f, i)
    key = _digest([f"{f}\x01{h}\x01{t}" for f, h, t in zip(files, heading, text, strict=True)])
    cache_dir = args.workdir / "lab" / f"{name}-{key}"
    inputs = [embed_input(h, t, tuning.embed_max_chars) for h, t in zip(heading, text, strict=True)]
    print(f"[{name}] {len(rows)} passages in {len(seen)} notes", flush=True)
    usev = _cached_array(cache_dir / f"use-{use.model_id}.npy", lambda: use.embed(inputs))
    sents = [sentences(t) or [t[:300]] for t in text]
    start = np.zeros(len(rows) + 1, np.int64)
    start[1:] = np.cumsum([len(s) for s in sents])
    flat = [s for ss in sents for s in ss]
    print(f"[{name}] {len(flat)} sentences ({len(flat) / len(rows):.1f} a passage)", flush=True)
    version = hashlib.sha256(Path(sentences.__code__.co_filename).read_bytes()).hexdigest()[:8]
    sentv = _cached_array(cache_dir / f"sent-{e5.model_id}-{version}.npy", lambda: e5.embed(flat))
    fronts = [r[4] for r in rows]
    titles = [note_title(f, fr) for f, fr in zip(files, fronts, strict=True)]
    need = [
        i
        for i, (t, h) in enumerate(zip(titles, heading, strict=True))
        if t and t.lower() not in h.lower()
    ]

    def titled_make() -> np.ndarray:
        out = e5v.copy()
        if need:
            txt = [
                embed_input(
                    f"{titles[i]} > {heading[i]}" if heading[i] else titles[i],
                    text[i],
                    tuning.embed_max_chars,
                )
                for i in need
            ]
            out[need] = e5.embed(txt)
        return out

    print(f"[{name}] {len(need)} passages whose headings lack their note's title", flush=True)
    titled = _cached_array(cache_dir / f"titled-{e5.model_id}-v1.npy", titled_make)
    return Corpus(
        name, root, ids, files, heading, text, first, e5v, usev, sentv, start, titled,
        {int(c): i for i, c in enumerate(ids)},
    )  # fmt: skip


# -- queries -------------------------------------------------------------------------------


@dataclass
class QData:
    text: str
    rels: dict[str, int]  # judged file -> grade
    lex: list[tuple[int, float, float]]  # (row, word score, bm25), best first
    strength: float
    mass: float
    ce: np.ndarray  # e5 cosine to every row (float16)
    cu: np.ndarray  # use-m3 cosine to every row
    cs: np.ndarray  # e5: the best sentence of every row
    ct: np.ndarray  # e5 cosine to the titled passages
    nons_e5: float  # the query's cosine to e5's nonsense centroid
    nons_use: float
    wordness: float  # mean unigram log-probability per character (e5's tokenizer)
    lang: str = ""
    kind: str = ""


@dataclass
class QSet:
    name: str
    corpus: Corpus
    by_name: bool  # judged by file name (SciFact) rather than path
    queries: list[QData]
    gib: bool = False


def wordness(tok, text: str) -> float:
    """Mean log-probability per character of the text's best segmentation into pieces
    (e5's own unigram tokenizer; 0 for a model without one, as the tests' tiny ones)."""
    if not hasattr(tok, "_scores"):
        return 0.0
    ids = tok.encode(text)[1:-1]
    chars = max(1, len(text.replace(" ", "")))
    return float(sum(tok._scores[i] for i in ids)) / chars


def query_data(
    corpus: Corpus,
    queries: list[tuple[str, dict[str, int], str, str]],
    e5,
    use,
    tuning,
    tok,
    cache: Path,
) -> list[QData]:
    from memo_core.search.query import Query
    from memo_core.search.ranking import word_strength
    from memo_core.values import MAX_K

    sizes = [corpus.name, str(len(corpus.ids)), str(len(corpus.sent))]
    key = _digest(sizes + [q for q, *_ in queries])
    path = cache / f"q-{key}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    out = []
    qe = e5.embed([q for q, *_ in queries], query=True)
    qu = use.embed([q for q, *_ in queries], query=True)
    cent_e5, cent_use = e5.nonsense_centroid(), use.nonsense_centroid()
    owner = np.repeat(np.arange(len(corpus.ids)), np.diff(corpus.sent_start))
    with C.searcher(corpus.root, e5, tuning) as s:
        [coll] = s.collections
        with C.reading(coll) as store:
            for (q, rels, lang, kind), ve, vu in zip(queries, qe, qu, strict=True):
                found = C.candidates(
                    coll, store, Query.of(q[:1000], MAX_K, "lex"), qvec=None, model_id=None,
                    wanted=CANDIDATES, stats=True,
                )  # fmt: skip
                terms = Query.of(q[:1000], MAX_K, "lex").terms
                strength = word_strength([found], [1.0], terms)
                from memo_core.search.ranking import idf

                mass = sum(idf(found.chunks, found.term_docs.get(t, 0)) for t in terms)
                lex = [(corpus.row_of[w.chunk], w.score, w.bm25) for w in found.words]
                ss = corpus.sent @ ve
                cs = np.full(len(corpus.ids), -1.0, np.float32)
                np.maximum.at(cs, owner, ss)
                out.append(
                    QData(
                        q, rels, lex, strength, mass,
                        (corpus.e5 @ ve).astype(np.float16),
                        (corpus.use @ vu).astype(np.float16),
                        cs.astype(np.float16),
                        (corpus.titled @ ve).astype(np.float16),
                        float(ve @ cent_e5), float(vu @ cent_use), wordness(tok, q),
                        lang, kind,
                    )
                )  # fmt: skip
    cache.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(out))
    return out


def gibberish(n: int, seed: int = 99) -> list[str]:
    """Strings that mean nothing, of kinds memo's own made-up strings (model/nonsense.py) do
    not use: pronounceable pseudo-words, random letters with digits, long single tokens,
    keyboard mashes across rows, and mixed scripts."""
    rng = random.Random(seed)
    cons_l, vow_l = "bcdfghjklmnprstvz", "aeiouy"
    cons_c, vow_c = "бвгджзклмнпрстфхцчш", "аеиоуыэюя"
    out = []
    for i in range(n):
        kind = i % 5
        if kind == 0:  # pseudo-words
            cons, vow = (cons_l, vow_l) if rng.random() < 0.5 else (cons_c, vow_c)
            words = [
                "".join(rng.choice(cons) + rng.choice(vow) for _ in range(rng.randint(2, 4)))
                for _ in range(rng.randint(1, 4))
            ]
        elif kind == 1:  # letters and digits
            alpha = "abcdefghijklmnopqrstuvwxyz0123456789"
            words = ["".join(rng.choice(alpha) for _ in range(rng.randint(4, 10)))
                     for _ in range(rng.randint(1, 3))]  # fmt: skip
        elif kind == 2:  # one long token
            alpha = "abcdefghijklmnopqrstuvwxyzабвгдежзиклмнопрстуфхцчшщ"
            words = ["".join(rng.choice(alpha) for _ in range(rng.randint(12, 24)))]
        elif kind == 3:  # mashes
            rows = ("qwertyuiop", "asdfghjkl", "zxcvbnm", "йцукенгшщз", "фывапролдж", "ячсмитьбю")
            words = []
            for _ in range(rng.randint(1, 3)):
                row = rng.choice(rows)
                a = rng.randrange(len(row) - 3)
                words.append(row[a : a + rng.randint(3, len(row) - a)])
        else:  # mixed scripts inside words
            alpha = "abcdefghijklmnopqrstuvwxyzабвгдежзиклмнопрстуфхцчшщ"
            words = ["".join(rng.choice(alpha) for _ in range(rng.randint(3, 8)))
                     for _ in range(rng.randint(2, 4))]  # fmt: skip
        out.append(" ".join(words))
    return out


# -- ranking as the engine does, and the levers --------------------------------------------


@dataclass(frozen=True)
class Policy:
    """One ranking policy; the defaults are today's engine (e5-small's fusion)."""

    use_share: float = 0.0  # the vector side: (1 - s) e5 + s use-m3 cosines
    titled: bool = False  # e5 of passages with their note's title
    note_mix: float = 0.0  # vector score + λ · the note's first passage's
    second_look: float = 0.0  # top-10 rescored: + μ · their best sentence (min-max in the 10)
    second_depth: int = 10
    second_gate: str = "all"  # all | question (questions and sentences only)
    floor_shift: float = 0.0  # added to the floor (negative: lower)
    floor: str = "engine"  # engine | none | gate
    # "gate": a query that looks like nonsense (use-m3's cosine to its nonsense centroid at
    # or above gate_use, or, without use-m3, wordness below gate_words) keeps today's floor
    # plus gate_strict; any other query gets floor_shift.
    gate_use: float = 0.3
    gate_words: float | None = None
    gate_strict: float = 0.0
    mode: str = "hybrid"  # hybrid | vec | lex
    lex_norm: str = "minmax"  # minmax | coverage
    coverage_power: float = 1.0
    dense_top: float = 0.7
    dense_weight: float = 0.05
    full: float = 1.5
    power: float = 2.0
    distinct: bool = False  # a page's passages: one note once (hit metrics only)
    look_norm: str = "head"  # head: hybrid's own scale; pool: min-max over the pool
    look_span: float = 0.0  # the sentence cosines' min-max span is at least this (absolute)
    agree: float = 0.0  # the vectors' weight raised by γ × (1 − agreement of the two sides)
    lex_gate: float = 0.0  # a word candidate's normalised score × min(1, its vec_n / τ)
    sent_mix: float = 0.0  # the vector side: (1 - a) passage + a best sentence (all rows)


def vec_scores(q: QData, c: Corpus, p: Policy) -> np.ndarray:
    e = (q.ct if p.titled else q.ce).astype(np.float32)
    if p.use_share:
        e = (1 - p.use_share) * e + p.use_share * q.cu.astype(np.float32)
    if p.note_mix:
        e = e + p.note_mix * e[c.first]
        e = e / (1 + p.note_mix)
    if p.sent_mix and (p.second_gate == "all" or is_question(q.text)):
        e = (1 - p.sent_mix) * e + p.sent_mix * q.cs.astype(np.float32)
    return e


def floor_of(q: QData, p: Policy) -> float | None:
    if p.floor == "none":
        return None
    base = q.nons_e5 - 0.06
    if p.use_share:  # the floor on the mixed scale: mixed the same way
        base = (1 - p.use_share) * base + p.use_share * (q.nons_use - 0.15)
    if p.floor == "gate":
        if p.gate_words is not None:
            nonsense = q.wordness < p.gate_words
        else:
            nonsense = q.nons_use >= p.gate_use
        return base + (p.gate_strict if nonsense else p.floor_shift)
    return base + p.floor_shift


def is_question(text: str) -> bool:
    """A question or a sentence (not a title or a few keywords)."""
    words = text.split()
    return text.rstrip().endswith("?") or len(words) >= 6


def rank(q: QData, c: Corpus, p: Policy) -> list[tuple[int, float]]:
    """(row, score) best first, as the engine would rank them under `p`."""
    from memo_core.search.fusion import minmax

    v = vec_scores(q, c, p)
    top = np.argpartition(-v, min(CANDIDATES, len(v) - 1))[:CANDIDATES]
    vec = [(int(r), float(v[r])) for r in top]
    lex = [(r, s) for r, s, _ in q.lex]
    vec_all = vec
    fl = floor_of(q, p)
    if fl is not None:
        worded = {r for r, _ in lex}
        vec = [(r, s) for r, s in vec if s >= fl or r in worded]
    full = min(1.0, q.strength / p.full)
    w = p.dense_weight + (p.dense_top - p.dense_weight) * (1 - full**p.power)
    if p.mode == "vec":
        w, lex = 1.0, []
    elif p.mode == "lex":
        w, vec = 0.0, []
    if p.lex_norm == "coverage":
        ln = _coverage_norm(q, lex, p)
    else:
        ln = minmax(lex)
    vn = minmax(vec)
    if p.agree and lex and vec:
        top_vec = {r for r, _ in sorted(vec_all, key=lambda t: -t[1])[:30]}
        a = sum(r in top_vec for r, _ in lex[:10]) / min(10, len(lex))
        w = w + (1 - w) * (1 - a) * p.agree
    if p.lex_gate:
        ln = {r: x * min(1.0, vn.get(r, 0.0) / p.lex_gate) for r, x in ln.items()}
    fused = {r: (1 - w) * ln.get(r, 0.0) + w * vn.get(r, 0.0) for r in ln.keys() | vn.keys()}
    out = sorted(fused.items(), key=lambda t: (-t[1], t[0]))
    if p.second_look and out and (p.second_gate == "all" or is_question(q.text)):
        if p.look_norm == "pool":
            lo, hi = out[-1][1], out[0][1]
            span = hi - lo if hi > lo else 1.0
            out = [(r, (s - lo) / span) for r, s in out]

        head = out[: p.second_depth]
        sv = np.array([float(q.cs[r]) for r, _ in head])
        span = max(sv.max() - sv.min(), p.look_span)
        sn = (sv - sv.min()) / span if span > 0 else np.ones_like(sv)
        head = [(r, s + p.second_look * x) for (r, s), x in zip(head, sn, strict=True)]
        head.sort(key=lambda t: (-t[1], t[0]))
        out = head + out[p.second_depth :]
    return out


def _coverage_norm(q: QData, lex, p: Policy) -> dict[int, float]:
    """Word scores over the query's IDF mass (absolute, not min-max): a stray match of one
    word out of many stays small."""
    top = q.mass * p.full if q.mass > 0 else 1.0
    return {r: min(1.0, s / top) ** p.coverage_power for r, s in lex}


# -- metrics -------------------------------------------------------------------------------


def file_of(c: Corpus, row: int, by_name: bool) -> str:
    f = c.files[row]
    return f.rsplit("/", 1)[-1] if by_name else f


def metrics(q: QData, c: Corpus, ranked: list[tuple[int, float]], by_name: bool, distinct: bool):
    files: dict[str, None] = {}
    for r, _ in ranked:
        files.setdefault(file_of(c, r, by_name), None)
        if len(files) >= 10:
            break
    nd = C.ndcg(list(files), q.rels)
    # Hits as a reader sees them: the first page's passages (a note may repeat).
    hits = [file_of(c, r, by_name) for r, _ in ranked[:10]]
    if distinct:
        hits = list(files)
    first = bool(hits) and q.rels.get(hits[0], 0) > 0
    top3 = any(q.rels.get(h, 0) > 0 for h in hits[:3])
    return nd, first, top3, not ranked


def evaluate(qsets: list[QSet], p: Policy) -> dict[str, list[tuple[float, bool, bool, bool]]]:
    return {
        s.name: [
            metrics(q, s.corpus, rank(q, s.corpus, p), s.by_name, p.distinct) for q in s.queries
        ]
        for s in qsets
    }


def paired(a: list[float], b: list[float]) -> tuple[float, float]:
    d = [x - y for x, y in zip(a, b, strict=True)]
    return C.mean_ci(d)


def show(qsets: list[QSet], policies: dict[str, Policy], base: str = "today") -> dict:
    res = {name: evaluate(qsets, p) for name, p in policies.items()}
    names = [s.name for s in qsets if not s.gib]
    width = max(len(n) for n in policies) + 2
    print(f"{'nDCG@10':{width}}" + "".join(f"{n[:14]:>15}" for n in names) + f"{'mean':>8}")
    out: dict = {}
    for pol, r in res.items():
        cells, means = [], []
        for n in names:
            nd = [x[0] for x in r[n]]
            m = sum(nd) / len(nd)
            means.append(m)
            if pol == base:
                cells.append(f"{m:15.4f}")
            else:
                d, ci = paired(nd, [x[0] for x in res[base][n]])
                cells.append(f"{m:7.4f}{d:+.3f}" + ("*" if abs(d) > ci else " "))
            out.setdefault(pol, {})[n] = m
        print(f"{pol:{width}}" + "".join(cells) + f"{sum(means) / len(means):8.4f}", flush=True)
    print()
    real = [s for s in qsets if s.name.startswith("real:")]
    if real:
        print(f"{'first / top3 (real)':{width}}" + "".join(f"{s.name[5:][:14]:>15}" for s in real)
              + f"{'all':>12}")  # fmt: skip
        for pol, r in res.items():
            cells, f_all, t_all, n_all = [], 0, 0, 0
            for s in real:
                f = sum(x[1] for x in r[s.name])
                t = sum(x[2] for x in r[s.name])
                cells.append(f"{f:>7}/{t:<3}/{len(r[s.name]):<3}")
                f_all, t_all, n_all = f_all + f, t_all + t, n_all + len(r[s.name])
            print(f"{pol:{width}}" + "".join(cells) + f"{f_all:>5}/{t_all}/{n_all}")
        print()
    gib = [s for s in qsets if s.gib]
    if gib:
        for pol, r in res.items():
            silenced = [sum(x[3] for x in r[s.name]) / len(r[s.name]) for s in gib]
            print(f"{pol:{width}} gibberish silenced: " + " ".join(f"{x:.0%}" for x in silenced))
        print()
    return out


# -- the sets ------------------------------------------------------------------------------


def make_sets(args, e5, use, tuning) -> list[QSet]:
    tok = e5._tok
    out: list[QSet] = []
    want = set(args.sets.split(","))
    gib_texts = gibberish(args.gibberish)
    if "scifact" in want:
        sci = build_corpus("scifact", args.scifact, args, e5, use, tuning)
        split = "train" if args.split in ("train", "all") else "test"
        qs, qrels = (
            C.load_queries(C.split_files(args.scifact, split)[0]),
            C.load_qrels(C.split_files(args.scifact, split)[1]),
        )
        items = [(qs[q], qrels[q], "en", "claim") for q in qs if q in qrels][: args.scifact_queries]
        cache = args.workdir / "lab" / "queries"
        out.append(QSet("scifact", sci, True, query_data(sci, items, e5, use, tuning, tok, cache)))
        if args.gibberish:
            g = [(t, {}, "", "gib") for t in gib_texts]
            out.append(
                QSet(
                    "gib:scifact", sci, True, query_data(sci, g, e5, use, tuning, tok, cache), True
                )
            )
    if "office" in want:
        en, ru = crossling.subsets(args.en, args.ru, 300, args.pages, args.workdir)
        corp = {
            "en": build_corpus(f"office-en-{args.pages}", en, args, e5, use, tuning),
            "ru": build_corpus(f"office-ru-{args.pages}", ru, args, e5, use, tuning),
        }
        split = "train" if args.split in ("train", "all") else "test"
        for style in ("title", "sentence"):
            for direction, pairs in crossling.judged_sets(
                args.en, args.ru, 300, split, style=style
            ).items():
                c = corp[direction[-2:]]
                items = [(q, {a: 1}, direction[:2], style) for q, a in pairs][: args.office_queries]
                cache = args.workdir / "lab" / "queries"
                name = f"{style[0].upper()} {direction}"
                out.append(QSet(name, c, False, query_data(c, items, e5, use, tuning, tok, cache)))
        if args.gibberish:
            for lang, c in corp.items():
                g = [(t, {}, "", "gib") for t in gib_texts]
                data = query_data(c, g, e5, use, tuning, tok, args.workdir / "lab" / "queries")
                out.append(QSet(f"gib:office-{lang}", c, False, data, True))
    if "real" in want:
        # The answers round's sets: pages in Russian or English (the others measure
        # languages, bench/realsets.py).
        for name in realsets.names():
            site = realsets.pages_language(name)
            if site not in ("en", "ru"):
                continue
            folder = realsets.corpus(name, args.workdir)
            c = build_corpus(f"real-{name}", folder, args, e5, use, tuning)
            qs = realsets.questions(name, args.split)
            for lang in ("en", "ru"):
                items = [
                    (q["text"], q["answers"], lang, q.get("kind", ""))
                    for q in qs
                    if q["lang"] == lang
                ]
                if items:
                    data = query_data(
                        c, items, e5, use, tuning, tok, args.workdir / "lab" / "queries"
                    )
                    out.append(QSet(f"real:{name[:-3]} {lang}→{site}", c, False, data))
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scifact", type=Path, default=BENCH.parent.parent / "shared/data/scifact-en")
    p.add_argument("--en", type=Path, default=BENCH.parent.parent / "shared/data/office-dev-en")
    p.add_argument("--ru", type=Path, default=BENCH.parent.parent / "shared/data/office-dev-ru")
    p.add_argument("--sets", default="scifact,office,real")
    p.add_argument("--split", default="train", choices=("train", "test", "all"))
    p.add_argument("--pages", type=int, default=1500)
    p.add_argument("--scifact-queries", type=int, default=400)
    p.add_argument("--office-queries", type=int, default=300)
    p.add_argument("--gibberish", type=int, default=200)
    p.add_argument("--e5", type=Path, default=MODELS / "multilingual-e5-small-q4")
    p.add_argument("--use", type=Path, default=MODELS / "use-multilingual-v3-q8")
    p.add_argument("--report", default="levers")
    p.add_argument("--workdir", type=Path, default=C.DEFAULT_WORKDIR)
    args = p.parse_args(argv)
    import os

    os.environ["MEMO_MODEL_DIR"] = str(args.e5)
    e5, use = load(args.e5), load(args.use)
    tuning = C.tuning_from()
    qsets = make_sets(args, e5, use, tuning)
    # The one report that embeds anew takes the second model and the cache's place too.
    reports = REPORTS | {"sentmodel": partial(report_sentmodel, use=use, workdir=args.workdir)}
    for report in args.report.split(","):
        reports[report](qsets)


def report_levers(qsets: list[QSet]) -> None:
    base = Policy()
    show(
        qsets,
        {
            "today": base,
            "vec only": Policy(dense_top=1.0, dense_weight=1.0),
            "lex only": Policy(dense_top=0.0, dense_weight=0.0),
            "use .1": Policy(use_share=0.1),
            "use .2": Policy(use_share=0.2),
            "titled": Policy(titled=True),
            "note .5": Policy(note_mix=0.5),
            "note .25": Policy(note_mix=0.25),
            "look .6": Policy(second_look=0.6),
            "look .6 q": Policy(second_look=0.6, second_gate="question"),
            "look .3": Policy(second_look=0.3),
            "floor -.04": Policy(floor_shift=-0.04),
            "floor none": Policy(floor="none"),
            "cov norm": Policy(lex_norm="coverage"),
            "stack": Policy(
                use_share=0.1,
                titled=True,
                second_look=0.6,
                second_gate="question",
                floor_shift=-0.04,
            ),  # fmt: skip
        },
    )


def report_floor(qsets: list[QSet]) -> None:
    """Where gibberish and real queries sit on each signal."""
    real = [q for s in qsets if not s.gib for q in s.queries]
    gib = [q for s in qsets if s.gib for q in s.queries]
    for label, get in (
        ("wordness", lambda q: q.wordness),
        ("nons_e5", lambda q: q.nons_e5),
        ("nons_use", lambda q: q.nons_use),
        ("top_e5 - nons_e5", lambda q: float(q.ce.max()) - q.nons_e5),
        ("top_use - nons_use", lambda q: float(q.cu.max()) - q.nons_use),
        ("z top e5", lambda q: float((q.ce.max() - q.ce.mean()) / (q.ce.std() + 1e-6))),
        ("z top use", lambda q: float((q.cu.max() - q.cu.mean()) / (q.cu.std() + 1e-6))),
    ):
        r = sorted(get(q) for q in real)
        g = sorted(get(q) for q in gib)
        print(
            f"{label:20} real p1 {C.pct(r, 1):.3f} p5 {C.pct(r, 5):.3f} p50 {C.pct(r, 50):.3f} "
            f"p95 {C.pct(r, 95):.3f} p99 {C.pct(r, 99):.3f} | gib p1 {C.pct(g, 1):.3f} "
            f"p10 {C.pct(g, 10):.3f} p50 {C.pct(g, 50):.3f} p90 {C.pct(g, 90):.3f} "
            f"p99 {C.pct(g, 99):.3f}"
        )


STACK = Policy(  # the engine's default (e5-small+use-m3)
    use_share=0.1,
    titled=True,
    second_look=0.6,
    second_depth=20,
    second_gate="question",
    look_norm="pool",
    look_span=0.03,
    floor="gate",
    floor_shift=-0.04,
)


def report_floors(qsets: list[QSet]) -> None:
    """Per floor rule, on top of the stack: real queries whose answer was in the top 10
    with no floor and is not with it, real queries left with no answer at all, and the
    gibberish silenced."""
    from dataclasses import replace

    variants = {
        "engine": replace(STACK, floor="engine", floor_shift=0.0),
        "engine -.04": replace(STACK, floor="engine", floor_shift=-0.04),
    }
    for t in (0.2, 0.25, 0.3):
        for shift in (-0.04, -0.08, -1.0):
            for strict in (0.0, 0.02):
                variants[f"gate use {t} {shift:+g} {strict:+g}"] = replace(
                    STACK, floor="gate", gate_use=t, floor_shift=shift, gate_strict=strict
                )
    for wcut in (-4.0, -4.3):
        for shift in (-0.04, -1.0):
            variants[f"gate words {wcut} {shift:+g}"] = replace(
                STACK, floor="gate", gate_words=wcut, floor_shift=shift
            )
    real = [s for s in qsets if not s.gib]
    gib = [s for s in qsets if s.gib]
    free = replace(STACK, floor="none")
    base_top = {
        s.name: [metrics(q, s.corpus, rank(q, s.corpus, free), s.by_name, True) for q in s.queries]
        for s in real
    }
    for name, p in variants.items():
        lost = empty = total = 0
        for s in real:
            for q, b in zip(s.queries, base_top[s.name], strict=True):
                r = rank(q, s.corpus, p)
                m = metrics(q, s.corpus, r, s.by_name, True)
                total += 1
                lost += b[0] > 0 and m[0] == 0
                empty += not r
        sil = [sum(not rank(q, s.corpus, p) for q in s.queries) / len(s.queries) for s in gib]
        print(
            f"{name:28} lost {lost}/{total} ({lost / total:.2%}), no answer {empty}; "
            "gibberish silenced " + " ".join(f"{x:.0%}" for x in sil),
            flush=True,
        )


def report_stacks(qsets: list[QSet]) -> None:
    from dataclasses import replace

    pols = {"today": Policy(), "today vec": Policy(mode="vec")}
    for label, st in {
        "stack": STACK,
        "stack+note.5": replace(STACK, note_mix=0.5),
        "stack+note.25": replace(STACK, note_mix=0.25),
        "stack look.4": replace(STACK, second_look=0.4),
        "stack look.8": replace(STACK, second_look=0.8),
        "stack look all": replace(STACK, second_gate="all"),
        "stack use.2": replace(STACK, use_share=0.2),
        "stack untitled": replace(STACK, titled=False),
    }.items():
        pols[label] = st
        pols[label + " vec"] = replace(st, mode="vec")
    show(qsets, pols)


def report_fusion(qsets: list[QSet]) -> None:
    """The pair's weight policy re-chosen under the stack: the largest mean nDCG@10 among
    policies never more than .002 below the better side alone on any set."""
    from dataclasses import replace

    real = [s for s in qsets if not s.gib]

    def means(p: Policy) -> dict[str, float]:
        return {s.name: sum(m[0] for m in ev) / len(ev) for s, ev in
                ((s, [metrics(q, s.corpus, rank(q, s.corpus, p), s.by_name, False)
                      for q in s.queries]) for s in real)}  # fmt: skip

    lex, vec = means(replace(STACK, mode="lex")), means(replace(STACK, mode="vec"))
    rows = []
    for top in (0.6, 0.7, 0.8, 0.9):
        for base in (0.05, 0.1, 0.2):
            for full in (1.0, 1.5, 2.0):
                for power in (1.0, 2.0):
                    p = replace(STACK, dense_top=top, dense_weight=base, full=full, power=power)
                    m = means(p)
                    margin = min(m[n] - max(lex[n], vec[n]) for n in m)
                    rows.append((sum(m.values()) / len(m), margin, top, base, full, power, m))
    rows.sort(key=lambda r: -r[0])
    names = " ".join(f"{n[:9]:>9}" for n in lex)
    print(f"{'top base full pow':22} {'mean':>7} {'margin':>7} {names}")
    for r in rows[:15] + [r for r in rows if (r[2], r[3], r[4], r[5]) == (0.7, 0.05, 1.5, 2.0)]:
        print(
            f"{r[2]:<5g}{r[3]:<5g}{r[4]:<5g}{r[5]:<7g} {r[0]:7.4f} {r[1]:+7.4f} "
            + " ".join(f"{v:9.4f}" for v in r[6].values())
        )
    ok = [r for r in rows if r[1] >= -0.002]
    if ok:
        r = ok[0]
        print(
            f"chosen (margin ≥ -.002): top {r[2]} base {r[3]} full {r[4]} power {r[5]}: "
            f"mean {r[0]:.4f} margin {r[1]:+.4f}"
        )


def report_agree(qsets: list[QSet]) -> None:
    from dataclasses import replace

    base = replace(STACK, second_depth=20)
    pols = {"today": Policy(), "stack d20": base, "stack d20 vec": replace(base, mode="vec"),
            "stack d20 lex": replace(base, mode="lex")}  # fmt: skip
    for g in (0.3, 0.5, 0.8):
        pols[f"agree {g:g}"] = replace(base, agree=g)
    for t in (0.2, 0.4):
        pols[f"lex gate {t:g}"] = replace(base, lex_gate=t)
    pols["agree .5 + gate .2"] = replace(base, agree=0.5, lex_gate=0.2)
    for top in (0.8, 0.9):
        pols[f"top {top:g}"] = replace(base, dense_top=top)
        pols[f"top {top:g} agree .3"] = replace(base, dense_top=top, agree=0.3)
    show(qsets, pols)


def report_look(qsets: list[QSet]) -> None:
    from dataclasses import replace

    pols = {"today": Policy(), "stack": STACK}
    for depth in (10, 20):
        for mu in (0.3, 0.6, 1.0):
            for norm in ("head", "pool"):
                pols[f"look d{depth} {mu:g} {norm}"] = replace(
                    STACK, second_depth=depth, second_look=mu, look_norm=norm
                )
    for a in (0.2, 0.35, 0.5):
        pols[f"sent mix {a:g}"] = replace(STACK, second_look=0.0, sent_mix=a)
        pols[f"sent mix {a:g} + look .6"] = replace(STACK, sent_mix=a)
    show(qsets, pols)


def report_depth(qsets: list[QSet]) -> None:
    """The second look's depth, weight and scale ("pool": the ranked scores min-max
    normalised over the pool first, as the engine does; "head": hybrid's own scale)."""
    from dataclasses import replace

    pols = {"today": STACK, "today vec": replace(STACK, mode="vec")}
    for depth in (10, 20, 30):
        for norm in ("pool", "head"):
            for mu in (0.6, 0.8):
                pols[f"d{depth} {norm} mu {mu:g}"] = replace(
                    STACK, second_depth=depth, look_norm=norm, second_look=mu
                )
    show(qsets, pols)


def report_sentmodel(qsets: list[QSet], use: Any, workdir: Path) -> None:
    """The second look's sentence vectors by e5-small (today), by use-m3 (about a fifth of
    the pass's time), and both models' cosines mixed (max, mean), under the stack."""
    from dataclasses import replace

    from memo_core.text.sentences import sentences

    by_corpus: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for s in qsets:
        c = s.corpus
        if id(c) not in by_corpus:
            flat = [x for t in c.text for x in (sentences(t) or [t[:300]])]
            path = workdir / "lab" / f"usesent-{_digest(flat)}.npy"
            owner = np.repeat(np.arange(len(c.ids)), np.diff(c.sent_start))
            by_corpus[id(c)] = (_cached_array(path, lambda f=flat: use.embed(f)), owner)
        vecs, owner = by_corpus[id(c)]
        qvecs = use.embed([q.text for q in s.queries], query=True)
        for q, qv in zip(s.queries, qvecs, strict=True):
            cs = np.full(len(c.ids), -1.0, np.float32)
            np.maximum.at(cs, owner, vecs @ qv)
            q.cs_by = {"e5": q.cs.astype(np.float32), "use": cs}  # type: ignore[attr-defined]
    pick = {
        "e5": lambda b: b["e5"],
        "use": lambda b: b["use"],
        "max": lambda b: np.maximum(b["e5"], b["use"]),
        "mean": lambda b: (b["e5"] + b["use"]) / 2,
    }
    for which, f in pick.items():
        for s in qsets:
            for q in s.queries:
                q.cs = f(q.cs_by).astype(np.float16)  # type: ignore[attr-defined]
        print(f"== sentences by {which}", flush=True)
        pols = {"stack": STACK, "stack vec": replace(STACK, mode="vec")}
        if which == "use":
            for mu in (0.4, 0.8):
                pols[f"look {mu:g}"] = replace(STACK, second_look=mu)
                pols[f"look {mu:g} vec"] = replace(STACK, second_look=mu, mode="vec")
        show(qsets, pols, base="stack")


REPORTS: dict[str, Callable[[list[QSet]], Any]] = {
    "depth": report_depth,
    "look": report_look,
    "agree": report_agree,
    "fusion": report_fusion,
    "levers": report_levers,
    "floor": report_floor,
    "floors": report_floors,
    "stacks": report_stacks,
}


if __name__ == "__main__":
    main()
