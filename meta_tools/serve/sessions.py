"""Whose category memory a served call uses: only identities the server has checked.

A legacy HTTP session (the SDK validates its `Mcp-Session-Id`), a legacy
connection, the stdio peer. A 2026-07-28 request's `Mcp-Session-Id` is not
validated, so it is ignored. A client-chosen `_meta["meta-tools/session"]` key
is namespaced by who sends it: the bearer token's holder, else the checked
peer, so two clients saying "main" stay apart.

Never by an address: a forwarded one is whatever the sender wrote, and a
peer's host and port are bound again by the next client (on this machine, or
on another replica sharing the memory in Redis). So a 2026-07-28 HTTP call
without a token has no memory across calls.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Mapping
from typing import Any

import mcp_types
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .http import token_holder

__all__ = ["SESSION_META_KEY", "SessionKeys"]

SESSION_META_KEY = "meta-tools/session"
"""A `_meta` key a client may send to keep its category memory across stateless calls."""


class _ConnectionIds:
    """A stable id per legacy connection (its `initialize` params live as long as it does)."""

    def __init__(self) -> None:
        self._ids: dict[int, str] = {}

    def key_for(self, marker: object) -> str:
        found = self._ids.get(id(marker))
        if found is None:
            found = self._ids[id(marker)] = f"conn:{uuid.uuid4().hex}"
            weakref.finalize(marker, self._ids.pop, id(marker), None)
        return found


class SessionKeys:
    """The memory key of each call (see the module docstring).

    Args:
        default_session: the key of a client that has no other identity (stdio
            has exactly one client).
    """

    def __init__(self, default_session: str | None = None) -> None:
        self.default_session = default_session
        self._connections = _ConnectionIds()

    def key_for(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> str | None:
        """Whose category memory this call uses; None: no memory."""
        meta: Mapping[str, Any] = params.meta or {}
        chosen = meta.get(SESSION_META_KEY)
        peer: str | None = self.default_session
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            headers = getattr(ctx.request, "headers", None)
            http_session = headers.get("mcp-session-id") if headers is not None else None
            if http_session:
                peer = f"http:{http_session}"
            elif ctx.session.client_params:
                peer = self._connections.key_for(ctx.session.client_params)
        if not (isinstance(chosen, str) and chosen):
            return peer
        owner = token_holder(ctx.request) or peer
        return f"{owner}:{chosen[:200]}" if owner else None
