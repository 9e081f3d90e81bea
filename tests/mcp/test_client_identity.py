"""The MCP client introduces itself as meta-tools with its version (issue 58 item 6)."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import Context, MCPServer

from meta_tools._version import __version__
from meta_tools.tools.mcp.connection import McpToolSource
from meta_tools.tools.mcp.transports import HttpTransportFactory
from tests.mcp.conftest import asgi_server

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])


def introduced() -> MCPServer:
    """A server whose one tool says how the calling client introduced itself."""
    server: MCPServer = MCPServer("introduced", log_level="WARNING")

    @server.tool()
    def who(ctx: Context) -> str:
        """The calling client's name and version."""
        params = ctx.session.client_params
        info = params.client_info if params is not None else None
        return f"{info.name} {info.version}" if info is not None else "nobody"

    return server


@MODES
async def test_a_server_in_memory_sees_the_client_named_meta_tools_with_its_version(
    mode: str,
) -> None:
    async with McpToolSource("introduced", introduced(), mode=mode) as source:  # type: ignore[arg-type]
        await source.connect()
        who = source.get_tool("who")
        assert who is not None
        assert await who.call({}) == {"result": f"meta-tools {__version__}"}


@MODES
async def test_a_server_over_streamable_http_sees_the_client_named_meta_tools(mode: str) -> None:
    async with asgi_server(introduced().streamable_http_app()) as base:
        target = HttpTransportFactory("streamable_http", f"{base}/mcp")
        async with McpToolSource("introduced", target, mode=mode) as source:
            await source.connect()
            who = source.get_tool("who")
            assert who is not None
            assert await who.call({}) == {"result": f"meta-tools {__version__}"}
