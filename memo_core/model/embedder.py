"""The `Embedder` interface: texts in, unit vectors out, and where a model's answers end.

`onnx_embedder.OnnxEmbedder` runs a model directory; tests and benchmarks make their own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType

import numpy as np

from memo_core.errors import ModelUnavailableError
from memo_core.model.nonsense import nonsense

NONSENSE_QUERIES = 64  # made-up queries whose mean is where the model puts nonsense


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Unit rows; NaN/inf become 0 and an all-zero row stays zero instead of turning into NaN."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float32), nan=0.0, posinf=0.0, neginf=0.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)


class Embedder(ABC):
    """Turns texts into float32 vectors of length `dim` with unit L2 norm (cosine = dot)."""

    model_id: str  # changes whenever the vectors would change; the index re-embeds on a change
    dim: int
    batch_size: int = 16
    # Below this cosine a passage found by meaning alone is not an answer (None: no floor);
    # chosen per model (bench/floor_lab.py), recorded in memo-model.json.
    min_similarity: float | None = None
    # ... nor below the query's own cosine to where nonsense lands plus this margin (None: no
    # such floor): see relevance_floor; chosen per model with bench/floor_lab.py.
    min_margin: float | None = None
    # The model's own hybrid weight policy (Tuning's dense_weight, dense_top,
    # lex_full_strength, lex_strength_power), where one was chosen for it; empty: the engine's.
    fusion: Mapping[str, float] = MappingProxyType({})
    _centroid: np.ndarray | None = None
    # A batch also stops at this many characters: memory grows with batch x longest text,
    # and 16 chunks of 2000 characters held 410 MB more at peak than batches capped here,
    # at the same speed (measured on office-dev-ru's longest chunks).
    max_batch_chars: int = 8000

    @abstractmethod
    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """One forward pass: array (len(texts), dim), float32, rows L2-normalised."""

    def nonsense_centroid(self) -> np.ndarray:
        """Where this model puts meaningless queries: the unit mean of its query vectors for
        memo's made-up strings (model/nonsense.py), computed once."""
        if self._centroid is None:
            mean = self.embed(nonsense(NONSENSE_QUERIES), query=True).mean(axis=0, keepdims=True)
            self._centroid = l2_normalize(mean)[0]
        return self._centroid

    def relevance_floor(self, qvec: np.ndarray) -> float | None:
        """The cosine a passage found by meaning alone needs to be an answer to the query
        whose vector is `qvec` (None: any cosine): the model's fixed floor and, where the
        model has a margin, the query's cosine to the nonsense centroid plus that margin.
        A query that looks like nonsense needs closer passages than one that does not."""
        floors = [] if self.min_similarity is None else [self.min_similarity]
        if self.min_margin is not None:
            floors.append(float(qvec @ self.nonsense_centroid()) + self.min_margin)
        return max(floors) if floors else None

    def ready(self) -> None:
        """Wait until the model can embed (one may load in the background); raises
        ModelUnavailableError when it cannot. By default it always can."""
        return None

    def usable(self) -> bool:
        """`ready`, as a yes or no: for a refresh handed a model still loading, which leaves
        the vectors alone if it fails (the search that got the model says why, through
        `ModelSource.get`, and so does every later one)."""
        try:
            self.ready()
        except ModelUnavailableError:
            return False
        return True

    def rest(self) -> None:
        """Indexing is done for now: what the model holds for it alone may go (the next
        indexing makes it again). By default it holds nothing of the kind."""
        return None

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        """Any number of texts, in batches of at most `batch_size` texts and `max_batch_chars`
        characters (one long text still goes alone); rows follow the order of `texts`."""
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Texts of similar length share a batch, so padding to the longest one wastes little.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for idx in self._batches(order, texts):
            vecs = np.asarray(self.embed_batch([texts[i] for i in idx], query=query))
            if vecs.shape != (len(idx), self.dim):
                raise ModelUnavailableError(
                    "model.shape",
                    model=self.model_id,
                    shape=vecs.shape,
                    rows=len(idx),
                    dim=self.dim,
                )
            out[idx] = vecs
        return out

    def _batches(self, order: list[int], texts: list[str]) -> Iterator[list[int]]:
        batch: list[int] = []
        chars = 0
        for i in order:
            if batch and (
                len(batch) >= max(1, self.batch_size)
                or chars + len(texts[i]) > self.max_batch_chars
            ):
                yield batch
                batch, chars = [], 0
            batch.append(i)
            chars += len(texts[i])
        if batch:
            yield batch
