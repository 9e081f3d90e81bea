"""The HTTP side of the served router: token check, who a request came from, the app, uvicorn.

`http_app` wraps the MCP server's app: DNS-rebinding protection with the
public names of `serve.allowed_hosts`, a body limit, an optional bearer token,
and the replica's name in its session ids. `serve_http` runs it with uvicorn
on a bound socket, believing forwarded headers only from `serve.trusted_proxies`
(none by default), and keeps SIGINT/SIGTERM for `serve` to re-raise once the
router is closed.

No address, the peer's or a forwarded one, ever names a client for its
memory: a forwarded address is whatever the sender wrote, and a peer's port
can be bound again by anyone on the machine. Addresses serve logs only.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import signal
import socket
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any

import anyio
import mcp_types
from anyio.abc import TaskStatus
from mcp.server import Server
from starlette.types import ASGIApp, Receive, Scope, Send

from ..config import ResumeConfig
from .disconnect import DisconnectWatch
from .events import EventLog
from .proxy import LOOPBACK, ReplicaSessionIds, transport_security
from .resumption import ResumeGate, Resumptions, resumable_app

__all__ = [
    "PRINCIPAL",
    "BearerTokenMiddleware",
    "Listen",
    "http_app",
    "serve_http",
    "token_holder",
]

logger = logging.getLogger("meta_tools.server")


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
                client = scope.get("client")  # the forwarded one behind a trusted proxy
                logger.warning(
                    "refused a request without the right token from %s",
                    client[0] if client else "?",
                )
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


def http_app(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    path: str = "/mcp",
    max_body_bytes: int = 1_048_576,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    replica: str | None = None,
    events: EventLog | None = None,
    resume: ResumeConfig | None = None,
) -> ASGIApp:
    """The streamable-HTTP ASGI app: DNS-rebinding protection, body limit, optional token.

    `allowed_hosts` / `allowed_origins` add the public names a proxy forwards;
    `replica` names this process in the session ids it hands out, for a load
    balancer's session affinity (see `meta_tools.serve.proxy`). With `events`,
    response streams can be resumed within the bounds of `resume` (see
    `meta_tools.serve.resumption`).
    """
    if token is None and host not in LOOPBACK:
        logger.warning("serving on %s without a token: anyone who can reach it can call it", host)
    security = transport_security(host, allowed_hosts, allowed_origins)
    app: ASGIApp
    if events is None:
        app = server.streamable_http_app(
            streamable_http_path=path,
            max_request_body_size=max_body_bytes,
            transport_security=security,
            host=host,
        )
    else:
        settings = resume or ResumeConfig()
        app = resumable_app(
            server,
            events,
            path=path,
            max_body_bytes=max_body_bytes,
            security=security,
            retry_ms=settings.retry_ms,
        )
        app = ResumeGate(app, Resumptions(events, settings))
    app = DisconnectWatch(app)
    if replica:
        app = ReplicaSessionIds(app, replica)
    return BearerTokenMiddleware(app, token) if token else app


@dataclass(frozen=True)
class Listen:
    """Where `serve_http` listens, and whose forwarded headers it believes (none if empty)."""

    host: str
    port: int
    path: str
    trusted_proxies: Sequence[str] = ()


async def serve_http(
    app: ASGIApp, where: Listen, task_status: TaskStatus[str], caught: list[int]
) -> None:
    """Serve `app` with uvicorn on `where` until cancelled or SIGINT/SIGTERM (kept in `caught`).

    Raises:
        OSError: the port cannot be bound (the socket is closed again).
    """
    import uvicorn

    class GracefulServer(uvicorn.Server):
        """uvicorn that records SIGINT/SIGTERM instead of re-raising them on shutdown.

        uvicorn re-raises a caught signal as soon as it stops, which would kill
        the process before the router closes its MCP sessions; `serve` re-raises
        them after that.
        """

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            caught.append(sig)
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)

    host, path = where.host, where.path
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, where.port))
        sock.listen(128)
    except OSError as exc:
        sock.close()  # a taken port must not leak the socket
        raise OSError(exc.errno, f"cannot listen on {host}:{where.port}: {exc.strerror}") from exc
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        timeout_graceful_shutdown=5,
        # A proxy's pooled connection must be closed by the proxy, never under a request
        # it is sending (nginx keeps idle upstream connections 60 s by default).
        timeout_keep_alive=75,
        # X-Forwarded-For / -Proto only from proxies named in the config: any local
        # process could otherwise claim to be a proxy and write any client address.
        proxy_headers=bool(where.trusted_proxies),
        forwarded_allow_ips=list(where.trusted_proxies),
    )
    server = GracefulServer(config)

    async def run() -> None:
        with anyio.CancelScope(shield=True):  # a cancelled serve() still shuts down gracefully
            await server.serve(sockets=[sock])
        group.cancel_scope.cancel()  # uvicorn stopped by itself (e.g. SIGINT)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run)
            task_status.started(f"http://{shown}:{bound}{path}")
            try:
                await anyio.sleep_forever()
            finally:
                server.should_exit = True
    finally:
        sock.close()
