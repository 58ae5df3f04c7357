"""Search: ranking the passages of one or more collections for a query."""
