"""`python -m memo_mcp`: the same as the `memo-mcp` console script."""

from memo_mcp.server import main

main()
