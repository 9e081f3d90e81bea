"""Why an MCP server could not be reached or a call on it failed, in words for people and models."""

from __future__ import annotations

import anyio
import httpx2
import mcp_types
from mcp import MCPError
from mcp.client.auth import OAuthFlowError
from pydantic import ValidationError

from ...exceptions import LoginRequiredError, ToolError, ToolExecutionError, ToolUnavailableError

__all__ = ["CALL_FAILURES", "call_failure", "describe_failure", "login_needed"]


def _leaves(exc: BaseException) -> list[BaseException]:
    inner = getattr(exc, "exceptions", None)  # an exception group (duck-typed for Python 3.10)
    if isinstance(inner, tuple):
        return [leaf for member in inner for leaf in _leaves(member)]
    return [exc]


def login_needed(exc: BaseException) -> LoginRequiredError | None:
    """The login a failed session needs, if that is why it failed."""
    return next((e for e in _leaves(exc) if isinstance(e, LoginRequiredError)), None)


def describe_failure(exc: BaseException, stderr: str = "") -> str:
    """One line saying why a session could not be opened, plus the server's last stderr."""
    leaves = [e for e in _leaves(exc) if not isinstance(e, anyio.get_cancelled_exc_class())]
    first = leaves[0] if leaves else exc
    if isinstance(first, LoginRequiredError):
        reason = str(first)
    elif isinstance(first, OAuthFlowError):  # the SDK's token, registration and flow errors
        reason = f"the OAuth login failed: {first}"
    elif isinstance(first, FileNotFoundError):
        reason = f"the command was not found ({first.filename or first})"
    elif isinstance(first, PermissionError):
        reason = f"the command cannot be run: {first.strerror}"
    elif isinstance(first, MCPError) and first.code == mcp_types.CONNECTION_CLOSED:
        reason = "the server closed the connection during the handshake (did it exit?)"
    elif isinstance(first, MCPError):
        reason = f"the server answered the handshake with an error: {first.message}"
    elif isinstance(first, TimeoutError):
        reason = str(first) or "the handshake timed out"
    elif isinstance(first, httpx2.ConnectError):
        reason = f"cannot connect: {first}"
    elif isinstance(first, httpx2.HTTPStatusError):
        reason = f"HTTP {first.response.status_code} from {first.request.url}"
    else:
        reason = f"{type(first).__name__}: {first}"
    if stderr:
        reason += f"; its stderr ended with:\n{stderr}"
    return reason


CALL_FAILURES = (
    MCPError,
    ValidationError,
    httpx2.HTTPError,
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)
"""What a call on an open session may raise (anything else is a bug and propagates)."""


def call_failure(
    exc: BaseException, server: str, tool: str, *, lost: bool
) -> tuple[ToolError, str | None]:
    """The tool error for a failed call, and why the session is broken (None: it is not).

    `lost` is the transport's state (see `TransportHealth`). An error reply from a
    live server is a tool error carrying its message, whatever its code.
    """
    if lost:
        gone = f"MCP server {server!r} closed the connection while {tool!r} was running;"
        return (
            ToolUnavailableError(f"{gone} it is reconnected on the next call"),
            "the connection closed during a call",
        )
    if isinstance(exc, MCPError):
        refused = f"MCP server {server!r} answered the call to {tool!r} with an error"
        return ToolExecutionError(f"{refused} ({exc.code}): {exc.message}"), None
    if isinstance(exc, ValidationError):
        invalid = f"MCP server {server!r} returned an invalid result for {tool!r}"
        return ToolExecutionError(f"{invalid}: {exc.error_count()} problem(s)"), None
    unreachable = f"MCP server {server!r} could not be reached during {tool!r}: {exc}"
    return ToolUnavailableError(unreachable), f"the transport failed ({type(exc).__name__})"
