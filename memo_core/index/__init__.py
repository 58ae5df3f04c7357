"""Index: one collection's SQLite file, and every SQL statement memo runs.

Where the file lives and how it is reached (`location`, `directory`, `dbfiles`), opening and
migrating it (`opening`, `schema`), the store with its word search, and the history of its
content that the store holds (`store`, `history`, `rows`), one refresher at a time
(`filelock`), and bringing it up to date with the files (`indexer`, `jobs`).
"""
