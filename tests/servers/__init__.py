"""Tiny real MCP servers for the tests (they import only the MCP SDK, so they start fast)."""
