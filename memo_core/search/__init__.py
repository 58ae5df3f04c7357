"""Search: ranking the passages of one or more collections for a query, in one package
above the collections it reads. `pipeline.search` runs the stages, listed in order at the
top of `pipeline`: per collection, `candidates` (words by `wordscore`, vectors); across
them, `ranking` (scales, floor, weights) and `fusion`; then `second_look` and the `page`.
`query` checks a search as asked, once.
"""
