"""Search: ranking the passages of one or more collections for a query.

The stages, in the order a search runs them (`searching.search` drives them), and what each
reads. Every setting is a field of `Tuning`; the few fixed numbers are named constants that
say why.

In each collection, from one snapshot (`Collection.candidates`), among the passages in
the search's scope where it has one (`scoping.ScopedChunks`):

1. Word candidates (`wordscore.word_candidates`): the n best passages by FTS5's BM25 among
   those holding any query word, heading and body weighted (`heading_weight`,
   `body_weight`); n is `Query.wanted`: `fusion_candidates`, or the hits up to this
   page's and one more (`Query.deep`) where that is more, and only those in vec mode.
2. Naming factor: a candidate whose heading column (heading path, note path) holds every
   query word is multiplied by 1 + `heading_match_boost` + `title_exact_boost` × how
   exactly a title of it is the query (`wordscore.naming_factor`).
3. Proximity: + `proximity_weight` × the BM25 of the query's adjacent word pairs standing
   within `proximity_window` words (read for NEAR_CANDIDATES_FACTOR × n passages).
   The word score is BM25 × naming + proximity (`wordscore.WordScore.score`), the one rule.
4. Word statistics: the chunk count and each query word's document count, where the next
   stages need them (several collections, or an adaptive hybrid search).
5. Vector candidates: the n nearest chunks by cosine (`index.vectors.VectorCache`), where
   the index's vectors are the query's model's; none at or below the n-th best of the
   collections read before (`ranking.VectorBar`), which could not make the pool.

Across the collections, once (`ranking.ranked`):

6. Scale: each collection's word scores × the query's IDF over all the collections against
   its IDF in that one (`ranking.scales`; reads stage 4), so they rank as one.
7. Relevance floor: a candidate found by meaning alone below the model's floor for the
   query (`Embedder.relevance_floor`) is dropped.
8. Dense weight (hybrid): the query's word strength, its best BM25 (stage 1, scaled: not
   the naming factor or proximity, whose settings must not move the vectors' say) over its
   IDF mass (`ranking.word_strength`), gives the vector side's weight (`fusion.weight_at`:
   `dense_weight` at full strength, `dense_top` at none, between them by `lex_full_strength`
   and `lex_strength_power`; or a model's own policy);
   `adaptive_fusion` False: `dense_weight` for every query.
9. Fusion (`fusion.rank`): each side's n best of all the collections together are pooled
   (what one collection holding them all would give); hybrid min-max normalises each side
   over the pooled candidates and scores (1 − weight) × words + weight × vectors, a side
   that did not find a passage counting 0; lex or vec mode ranks that side's scores. All
   are kept, ties broken by (collection, chunk).
10. Second look (`second_look.second_look`; a model with a `second_look` weight, a query
    that reads as a question or a sentence, not lex mode): every score min-max normalised
    over the ranked passages, and the `DEPTH` best rescored by their best sentence's cosine
    (the sentence vectors, `Store.sentence_vectors`), min-max normalised among them, times
    that weight.
11. Pages (`page`): the rows of the best passages, up to twice this page's end and a
    little more, read once; a copy of a passage shown above it (word shingles overlapping by
    `page.NEAR_DUPLICATE`, no query word the shown one lacks) folded into it (`also_in`);
    then pages of k, each with one passage of a note while enough notes remain.
12. Hits: the page's passages (`searching._hit`), each with its `Explain` where asked:
    the figures of stages 1-3 and 6-10 as this ranking computed them (`ranking.Placed`).
"""
