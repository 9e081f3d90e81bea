"""MCP server tools: a source per server (connection, listing, reconnects) and a tool per remote tool."""

from ._io import HttpTransportFactory
from .source import McpTarget, McpToolSource
from .tool import McpServerTool

__all__ = ["HttpTransportFactory", "McpServerTool", "McpTarget", "McpToolSource"]
