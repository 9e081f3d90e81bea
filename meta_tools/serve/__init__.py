"""The router as an MCP server (stdio or streamable HTTP), with the host's model through sampling."""

from .server import serve

__all__ = ["serve"]
