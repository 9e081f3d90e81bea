"""A demo MCP server that ships with meta-tools: `python -m meta_tools.demo`.

Fifteen offline, deterministic tools in four groups (numbers, dates, text,
files under one sandbox folder). It feeds `Meta_tool_config.json`,
`example.py`, the benchmarks and the tests with a real MCP server.
"""

from .server import ROOT_ENV, TOOL_GROUPS, build_server

__all__ = ["ROOT_ENV", "TOOL_GROUPS", "build_server"]
