"""memo_mcp: the MCP server over memo_core (`memo-mcp`, stdio). See `memo_mcp.server`."""
