"""An MCP server (stdio) whose tools misbehave on purpose, for the fault matrix.

    python -m tests.faults.faulty_server            # serve
    python -m tests.faults.faulty_server --fail     # print the token to stderr and exit 1

Tools: `echo` (works), `crash` (the process exits mid-call), `hang` (never
answers), `refuse` (isError with a message), `swap` (removes `old_tool`, adds
`new_tool`, announces the change), `old_tool`, `token` (returns its env's
SEARCH_TOKEN, as a leaky server would), `rpc_error` (answers with a JSON-RPC
error of the given code), `slow_echo` (answers after a delay), `pid`.
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build() -> MCPServer:
    server: MCPServer = MCPServer("faulty", log_level="WARNING")

    @server.tool()
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool()
    def crash() -> str:
        """Exit the server process in the middle of the call."""
        os._exit(3)

    @server.tool()
    async def hang() -> str:
        """Never answer."""
        await anyio.sleep_forever()
        return "unreachable"

    @server.tool()
    def refuse(reason: str) -> str:
        """Fail with `reason` (an isError result)."""
        raise ToolError(f"refused: {reason}")

    @server.tool()
    def old_tool() -> str:
        """A tool that `swap` removes."""
        return "old"

    @server.tool()
    async def swap(ctx: Context) -> str:
        """Replace `old_tool` with `new_tool` and announce the new tool list."""
        server.remove_tool("old_tool")
        server.add_tool(lambda: "new", name="new_tool", description="The tool `swap` adds.")
        await ctx.notify_tools_changed()
        await ctx.request_context.session.send_tool_list_changed()
        return "swapped"

    @server.tool()
    def token() -> str:
        """Report the token this server was given (a leaky server)."""
        return f"my token is {os.environ.get('SEARCH_TOKEN', '')}"

    @server.tool()
    def rpc_error(code: int, message: str) -> str:
        """Answer with a JSON-RPC error (e.g. -32000, which is also the SDK's "connection closed")."""
        raise MCPError(code=code, message=message)

    @server.tool()
    async def slow_echo(text: str, seconds: float) -> str:
        """Return the text after a delay."""
        await anyio.sleep(seconds)
        return text

    @server.tool()
    def pid(label: str = "") -> int:
        """The server's process id (`label` tells two asks apart: an identical call is not run twice)."""
        return os.getpid()

    return server


if __name__ == "__main__":
    if sys.argv[1:] == ["--fail"]:
        sys.stderr.write(f"fatal: token {os.environ.get('SEARCH_TOKEN', '')} was rejected\n")
        sys.exit(1)
    build().run()
