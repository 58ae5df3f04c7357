"""memo_cli: the `memo` command line, a thin front end over `memo_core`'s front door."""
