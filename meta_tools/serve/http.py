"""The HTTP side of the served router: bearer-token check, who a request came from, the ASGI app."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any

import mcp_types
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from .disconnect import DisconnectWatch

__all__ = ["PRINCIPAL", "BearerTokenMiddleware", "connection_of", "http_app", "token_holder"]

logger = logging.getLogger("meta_tools.server")

_LOOPBACK = ("127.0.0.1", "localhost", "::1")


_UNAUTHORIZED = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": mcp_types.INVALID_REQUEST,
            "message": "Unauthorized: this server needs the header 'Authorization: Bearer <token>'",
        },
    }
).encode()


class BearerTokenMiddleware:
    """ASGI middleware: HTTP requests must carry `Authorization: Bearer <token>` (else 401).

    An accepted request is marked as sent by the token's holder (see `token_holder`).
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        if not token:
            raise ValueError("the bearer token must not be empty")
        self.app = app
        self._expected = f"Bearer {token}".encode()
        digest = hashlib.sha256(self._expected).hexdigest()[:16]
        self._principal = f"token:{digest}"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = _UNAUTHORIZED  # a JSON-RPC error, so MCP clients show its message
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="meta-tools"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
            scope[PRINCIPAL] = self._principal
        await self.app(scope, receive, send)


PRINCIPAL = "meta_tools.principal"
"""The scope key naming who an HTTP request was authenticated as."""


def _http_scope(request: Any) -> dict[str, Any] | None:
    scope = getattr(request, "scope", None)
    return scope if isinstance(scope, dict) and scope.get("type") == "http" else None


def token_holder(request: Any) -> str | None:
    """Who an HTTP request was authenticated as (by its bearer token); None without a token."""
    principal = (_http_scope(request) or {}).get(PRINCIPAL)
    return principal if isinstance(principal, str) else None


def connection_of(request: Any) -> str | None:
    """The TCP connection an HTTP request came on; None off HTTP."""
    client = (_http_scope(request) or {}).get("client")
    return f"conn:{client[0]}:{client[1]}" if client else None


def http_app(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    path: str = "/mcp",
    max_body_bytes: int = 1_048_576,
) -> ASGIApp:
    """The streamable-HTTP ASGI app: DNS-rebinding protection on, body limit, optional token."""
    if host in _LOOPBACK:
        security = None  # the SDK turns on DNS-rebinding protection for loopback hosts
    else:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=host not in ("0.0.0.0", "::"),
            allowed_hosts=[f"{host}:*", f"[{host}]:*"],
            allowed_origins=[f"http://{host}:*", f"https://{host}:*"],
        )
        if token is None:
            logger.warning(
                "serving on %s without a token: anyone who can reach it can call it", host
            )
    app: ASGIApp = server.streamable_http_app(
        streamable_http_path=path,
        max_request_body_size=max_body_bytes,
        transport_security=security,
        host=host,
    )
    app = DisconnectWatch(app)
    return BearerTokenMiddleware(app, token) if token else app
