"""How meta-tools introduces itself to the MCP servers it connects to (`clientInfo`)."""

from __future__ import annotations

import mcp_types

from ..._version import __version__

__all__ = ["CLIENT_INFO"]

CLIENT_INFO = mcp_types.Implementation(name="meta-tools", version=__version__)
"""Sent in `initialize` (2025-11-25) and in every request's envelope (2026-07-28), so that a
server's logs can tell meta-tools from other clients (the SDK would say `mcp 0.1.0`)."""
