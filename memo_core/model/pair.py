"""Two models' meaning in one vector: memo's default, e5-small's and use-m3's together.

Each passage's vector is both models' unit vectors side by side, each times the square root
of its share (`share` of the first): a dot product of two such vectors is `share` × the
first model's cosine + (1 − `share`) × the second's, so the index holds one vector a passage,
the search scores one matrix, and every rule that reads a cosine reads the fused one.
e5-small reads a question in one language against passages in another better than use-m3
does on most sets, use-m3 better on some (Russian questions over English notes); a tenth
of use-m3's say closes most of that gap and costs e5-small nothing within one language
(BENCHMARKS.md, "Two models").

Where nothing is found: use-m3 tells made-up strings from real queries far better than
e5-small, whose cosines all run high: questions and sentences lie within .1 of use-m3's
nonsense centroid, titles and keywords mostly within .25 (a few short ones up to .45),
made-up strings .38 or more (p50 .63) on every set measured. So a query's floor is both
models' own floors for it (each model's cosine of it to its nonsense centroid plus its
margin), fused as the cosines are; and a query use-m3 finds clearly real (below
`nonsense_gate`) gets `lenient` more room, so that a question full of names, which e5-small
puts near its own nonsense, keeps its answers.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import MappingProxyType

import numpy as np

from memo_core.model.embedder import Embedder
from memo_core.model.sources import PairSource


class PairedEmbedder(Embedder):
    """`first`'s and `second`'s vectors side by side, weighted so that a dot product is
    `share` × `first`'s cosine + (1 − `share`) × `second`'s."""

    def __init__(
        self,
        first: Embedder,
        second: Embedder,
        *,
        share: float,
        nonsense_gate: float,
        lenient: float,
        fusion: Mapping[str, float] = MappingProxyType({}),
        second_look: float = 0.0,
    ) -> None:
        if not 0.0 < share < 1.0:
            raise ValueError(f"share must lie strictly between 0 and 1, got {share}")
        self.first, self.second, self.share = first, second, share
        self.model_id = f"{first.model_id}+{second.model_id}@{share:g}"
        self.dim = first.dim + second.dim
        self._weights = (math.sqrt(share), math.sqrt(1.0 - share))
        self.nonsense_gate, self.lenient = nonsense_gate, lenient
        self.fusion = MappingProxyType(dict(fusion))
        self.second_look = second_look
        self._beside_lock = threading.Lock()
        self._beside_pool: ThreadPoolExecutor | None = None

    @property
    def sentence_model(self) -> Embedder:
        """The model a passage's sentences are embedded by: the first (the stronger one)."""
        return self.first

    def sentence_query(self, qvec: np.ndarray) -> np.ndarray:
        return self.part(qvec, 0)

    def part(self, vector: np.ndarray, which: int) -> np.ndarray:
        """The unit vector of part `which` (0: the first model's, 1: the second's) of a
        vector this pair made."""
        cut = self.first.dim
        piece = vector[:cut] if which == 0 else vector[cut:]
        return np.asarray(piece, np.float32) / np.float32(self._weights[which])

    def embed(self, texts: Sequence[str], *, query: bool = False) -> np.ndarray:
        # Both models at once: the second's runs take the cores the first's leave (a
        # query: 4.7 ms one after the other, 3.3 at once; indexing: the first's
        # threads waited for the second for about a tenth of it). Cut short (Ctrl-C, an
        # error), the second's work is let go, not waited for.
        later = self._beside().submit(self.second.embed, texts, query=query)
        a = self.first.embed(texts, query=query)
        return self._joined(a, later.result())

    def _beside(self) -> ThreadPoolExecutor:
        """The thread the second model embeds on, made on first use."""
        with self._beside_lock:
            if self._beside_pool is None:
                self._beside_pool = ThreadPoolExecutor(1, thread_name_prefix="memo-second")
            return self._beside_pool

    def embed_batch(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        a = self.first.embed_batch(texts, query=query)
        b = self.second.embed_batch(texts, query=query)
        return self._joined(np.asarray(a), np.asarray(b))

    def _joined(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        wa, wb = self._weights
        return np.hstack([a * np.float32(wa), b * np.float32(wb)]).astype(np.float32)

    def looks_like_nonsense(self, qvec: np.ndarray) -> bool:
        """Whether the second model puts the query where it puts made-up strings."""
        return float(self.part(qvec, 1) @ self.second.nonsense_centroid()) >= self.nonsense_gate

    def relevance_floor(self, qvec: np.ndarray) -> float | None:
        """The parts' own floors for the query (each model's `relevance_floor` of its part),
        fused as the cosines are, `lenient` added for a query that does not look like
        nonsense; None where a part has no floor."""
        first = self.first.relevance_floor(self.part(qvec, 0))
        second = self.second.relevance_floor(self.part(qvec, 1))
        if first is None or second is None:
            return None
        fused = self.share * first + (1.0 - self.share) * second
        return fused if self.looks_like_nonsense(qvec) else fused + self.lenient

    def ready(self) -> None:
        self.first.ready()
        self.second.ready()

    def rest(self) -> None:
        self.first.rest()
        self.second.rest()


def paired(source: PairSource, first: Embedder, second: Embedder) -> PairedEmbedder:
    """The pair `source` names, of its two models as loaded, with its own policy."""
    return PairedEmbedder(
        first,
        second,
        share=source.share,
        nonsense_gate=source.nonsense_gate,
        lenient=source.lenient,
        fusion=dict(source.fusion),
        second_look=source.second_look,
    )
