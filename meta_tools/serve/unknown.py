"""A call to a category the router does not have, answered as the host's protocol version asks.

From 2025-11-25 on, the specification lists an unknown tool among the protocol
errors of `tools/call` (JSON-RPC -32602, invalid params), beside input validation
errors, which it moved to tool results so that a model can correct them. The host
offered the tool list itself, so a name outside it is the host's to handle (a
stale list after a reload: `tools/list_changed` was sent). The error's message
keeps the close names and the categories ("did you mean ..."), so a host that
shows it to its model loses nothing.

Before 2025-11-25 the answer is a tool result with `isError`: the same words,
which reach the calling model whatever the host does with JSON-RPC errors.
The Hosts page of the docs says the same for users.
"""

from __future__ import annotations

from mcp import MCPError
from mcp_types import INVALID_PARAMS
from mcp_types.version import is_version_at_least

from ..exceptions import CategoryNotFoundError

__all__ = ["PROTOCOL_ERROR_SINCE", "unknown_category_error"]

PROTOCOL_ERROR_SINCE = "2025-11-25"
"""The first protocol version whose `tools/call` answers an unknown tool with -32602."""


def unknown_category_error(
    protocol_version: str | None, problem: CategoryNotFoundError
) -> MCPError | None:
    """The JSON-RPC error to answer `problem` with; None: answer it as a tool result."""
    if protocol_version is None or not is_version_at_least(protocol_version, PROTOCOL_ERROR_SINCE):
        return None
    return MCPError(code=INVALID_PARAMS, message=str(problem))
