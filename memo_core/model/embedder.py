"""The `Embedder` interface: texts in, unit vectors out, and where a model's answers end.

`onnx_embedder.OnnxEmbedder` runs a model directory; tests and benchmarks make their own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from memo_core.errors import ModelUnavailableError
from memo_core.model.nonsense import nonsense

if TYPE_CHECKING:  # numpy loads with the first model used: a search by words needs none
    import numpy as np

NONSENSE_QUERIES = 64  # made-up queries whose mean is where the model puts nonsense
# A centroid kept from an earlier start is checked against the first CHECK_QUERIES of them
# (`fits_nonsense`: 20 ms with e5-small, 2-3 ms with USE, against 190 and 22 ms for all
# 64): it must lie no farther from their unit mean than CHECK_SPREAD times their own spread
# around it (the root mean square of their distances to it). In those units, with 8: the
# real centroid lies at .32 (e5-small) and .42 (USE), centroids of other made-up strings
# at .37-.49, a real query's vector (16 of them, titles to single letters) at 1.33
# (e5-small) and 1.13 (USE) at the least, a random unit vector at 4.0 and 1.65, a negated
# centroid at 5.8 and 2.4. With 4 queries USE's real centroid lay at .72, too near.
CHECK_QUERIES = 8
CHECK_SPREAD = 0.75
CHECK_TOLERANCE = 1e-3  # float32 rounding, and a model that puts all nonsense in one point


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Unit rows; NaN/inf become 0 and an all-zero row stays zero instead of turning into NaN."""
    import numpy as np

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
    # How much a first page's passage gains by its best sentence (search.second_look), for
    # questions and sentences; 0: no second look (chosen per model on train sets).
    second_look: float = 0.0
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

    def fits_nonsense(self, kept: object) -> bool:
        """Whether `kept` (a centroid an earlier start kept) can be where this model puts
        nonsense: `dim` finite numbers, as long as the unit mean of the first CHECK_QUERIES
        made-up queries (1; 0 where the model puts them all at 0) and near it. A wrong
        centroid would move every floor: a negated one lets nonsense through, one far off
        silences search by meaning."""
        if not isinstance(kept, list) or len(kept) != self.dim:
            return False
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in kept):
            return False
        import numpy as np

        vec = np.asarray(kept, dtype=np.float64)
        if not np.isfinite(vec).all():
            return False
        probes = self.embed(nonsense(CHECK_QUERIES), query=True).astype(np.float64)
        mean = l2_normalize(probes.mean(axis=0, keepdims=True))[0].astype(np.float64)
        spread = float(np.sqrt(((probes - mean) ** 2).sum(axis=1).mean()))
        unit = abs(np.linalg.norm(vec) - np.linalg.norm(mean)) <= CHECK_TOLERANCE
        return bool(unit and np.linalg.norm(vec - mean) <= CHECK_SPREAD * spread + CHECK_TOLERANCE)

    def relevance_floor(self, qvec: np.ndarray) -> float | None:
        """The cosine a passage found by meaning alone needs to be an answer to the query
        whose vector is `qvec` (None: any cosine): the model's fixed floor and, where the
        model has a margin, the query's cosine to the nonsense centroid plus that margin.
        A query that looks like nonsense needs closer passages than one that does not."""
        floors = [] if self.min_similarity is None else [self.min_similarity]
        if self.min_margin is not None:
            floors.append(float(qvec @ self.nonsense_centroid()) + self.min_margin)
        return max(floors) if floors else None

    @property
    def sentence_model(self) -> Embedder | None:
        """The model that embeds a passage's sentences for the second look at a first page
        (search.second_look), or None: this model's searches take no second look."""
        return None

    def sentence_query(self, qvec: np.ndarray) -> np.ndarray:
        """The query's vector in `sentence_model`'s space, from its vector `qvec`."""
        return qvec

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
        import numpy as np

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
