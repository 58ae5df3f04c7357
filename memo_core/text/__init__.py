"""Text: a note's Markdown as memo reads it.

Chunks with their lines and heading paths (`chunking`, `headings`), word normalisation for
indexing and querying alike (`textnorm`), and names as any client may print them
(`escapes`). Pure functions over strings: no files, no index.
"""
