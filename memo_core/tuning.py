"""The settings that shape an index and its ranking, passed in (never module globals).

`Tuning()` holds the defaults, tuned on SciFact train (bench/tune.py, BENCHMARKS.md).
Benchmarks and tests build their own `Tuning(...)` and hand it to the `Engine`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import Stemmer

from memo_core.text import chunking, frontmatter, textnorm, titles

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Tuning:
    # What the index holds (part of its identity: a change rebuilds it).
    chunk_max_chars: int = chunking.DEFAULT_MAX_CHARS  # best of 600/1200/2000/whole on train
    embed_max_chars: int = 2000  # the embedded text is cut here; FTS5 gets the whole chunk
    max_file_bytes: int = 10 * MB  # larger files are cut here (and said so in status)
    # How a search ranks (read per query: no rebuild).
    # The stages that read these, in order: memo_core/search/__init__.py.
    # Share of the vector side in hybrid when the query's words match the notes well; less
    # well matched (another language, words the notes do not use), the vectors get more say:
    # see search.ranking.word_strength and search.fusion.weight_at. Chosen on SciFact train and
    # office-dev's wide train split, four directions (bench/fusion_lab.py --split wide;
    # BENCHMARKS.md).
    dense_weight: float = 0.1
    # ... and for a query whose words match nothing (below 1: where its stray words do match,
    # they still count; e5-small's policy, BENCHMARKS.md "A fusion that never loses").
    dense_top: float = 1.0
    lex_full_strength: float = 1.25  # best BM25 / the query's IDF mass where words count fully
    lex_strength_power: float = 0.5
    adaptive_fusion: bool = True  # False: `dense_weight` for every query (as memo 0.1 did)
    fusion_candidates: int = 200  # candidates per side fused in hybrid (at least k)
    heading_weight: float = 2.0  # BM25 weight of the heading path (2 = 4 > 1 on train)
    # A passage whose heading path or note path holds every word of the query (it names the
    # passage) scores × (1 + heading_match_boost + title_exact_boost × the largest share of
    # a title's words that are query words): see search/wordscore.py. 0 and 0: off.
    heading_match_boost: float = 0.5
    title_exact_boost: float = 1.5
    # Word score + this × the BM25 of the query's adjacent word pairs standing within
    # `proximity_window` words of each other in the passage (search/wordscore.py). 0: off.
    proximity_weight: float = 0.1
    proximity_window: int = 3
    body_weight: float = 1.0
    # How work is batched (no effect on results).
    batch_chunks: int = 256  # chunks per write transaction

    def __post_init__(self) -> None:
        if min(self.chunk_max_chars, self.embed_max_chars, self.max_file_bytes) < 1:
            raise ValueError(f"sizes must be positive: {self}")
        if not 0.0 <= self.dense_weight <= self.dense_top <= 1.0:
            raise ValueError(
                "dense_weight and dense_top must be within 0..1, dense_weight the smaller, got "
                f"{self.dense_weight} and {self.dense_top}"
            )
        if self.lex_full_strength <= 0 or self.lex_strength_power <= 0:
            raise ValueError(
                "lex_full_strength and lex_strength_power must be positive, got "
                f"{self.lex_full_strength} and {self.lex_strength_power}"
            )

    def with_fusion(self, fusion: Mapping[str, float]) -> Tuning:
        """These settings with a model's own hybrid weight policy (Embedder.fusion)."""
        if not fusion:
            return self
        return replace(
            self,
            dense_weight=fusion.get("dense_weight", self.dense_weight),
            dense_top=fusion.get("dense_top", self.dense_top),
            lex_full_strength=fusion.get("lex_full_strength", self.lex_full_strength),
            lex_strength_power=fusion.get("lex_strength_power", self.lex_strength_power),
        )

    # Of `identity`, what decides the vector of a passage besides its text and heading (its
    # hash, `index.indexer.chunk_hash`) and the model: how the text embedded is made of them.
    EMBEDDING_KEYS = ("embedded", "embed_max_chars")

    def identity(self) -> dict[str, Any]:
        """Everything that decides what an index holds, beside the model: an index made
        under another identity is rebuilt (the model has its own record, `vec_model`)."""
        return {
            "chunker": chunking.CHUNKER_VERSION,
            "embedded": titles.EMBEDDED_VERSION,
            "front_matter": frontmatter.PARSER_VERSION,
            "chunk_max_chars": self.chunk_max_chars,
            "embed_max_chars": self.embed_max_chars,
            "max_file_bytes": self.max_file_bytes,
            "words": textnorm.NORMALIZER_VERSION,
            "stemmer": Stemmer.version(),
        }
