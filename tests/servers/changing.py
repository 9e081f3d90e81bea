"""A small MCP server whose tool list can change, and whose process can be killed mid-call.

    python -m tests.servers.changing              # stdio
    python -m tests.servers.changing --http PORT  # streamable HTTP on 127.0.0.1 (0: a free port)

With --http it prints `listening on http://127.0.0.1:PORT/mcp` once the socket listens.
"""

from __future__ import annotations

import os
import socket
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build() -> MCPServer:
    server: MCPServer = MCPServer("changing", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def add(a: int, b: int = 1) -> int:
        """Add two integers (b defaults to 1)."""
        return a + b

    @server.tool()
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool()
    async def wait(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return f"waited {seconds}"

    @server.tool()
    def fail(message: str) -> str:
        """Always fail with the given message."""
        raise ToolError(message)

    @server.tool()
    async def learn(name: str, ctx: Context) -> str:
        """Add a tool called `name` that answers with its own name, and announce the change."""
        server.add_tool(lambda: name, name=name, description=f"Answers {name!r}.")
        await _announce(ctx)
        return f"learned {name}"

    @server.tool()
    async def forget(name: str, ctx: Context) -> str:
        """Remove the tool called `name`, and announce the change."""
        server.remove_tool(name)
        await _announce(ctx)
        return f"forgot {name}"

    return server


async def _announce(ctx: Context) -> None:
    """tools/list_changed in both eras: the listen bus (2026-07-28) and the connection (legacy)."""
    await ctx.notify_tools_changed()
    await ctx.request_context.session.send_tool_list_changed()


async def _serve_http(port: int) -> None:
    import uvicorn

    app = build().streamable_http_app()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    print(f"listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    await uvicorn.Server(uvicorn.Config(app, log_level="warning")).serve(sockets=[sock])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        anyio.run(_serve_http, int(sys.argv[2]))
    else:
        build().run()
