"""MCP server tools: a source per server (connection, listing, reconnects) and a tool per remote tool."""

from .connection import McpTarget, McpToolSource
from .tool import McpServerTool
from .transports import HttpTransportFactory

__all__ = ["HttpTransportFactory", "McpServerTool", "McpTarget", "McpToolSource"]
