"""The HTTP app behind a proxy or load balancer: accepted names, and session ids to route by.

DNS-rebinding protection accepts only requests whose `Host` names this server
(and whose `Origin`, when a browser sends one, is one of its origins). Behind
a proxy the names are the public ones the proxy forwards, so they come from
the config (`serve.allowed_hosts`, `serve.allowed_origins`). Forwarded client
addresses and schemes are uvicorn's job (`serve.trusted_proxies`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LOOPBACK", "REPLICA_NAME", "ReplicaSessionIds", "transport_security"]

REPLICA_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
_SESSION_HEADER = b"mcp-session-id"

LOOPBACK = ("127.0.0.1", "localhost", "::1")
_WILDCARD = ("0.0.0.0", "::", "")


def _bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def transport_security(
    host: str, allowed_hosts: Sequence[str] = (), allowed_origins: Sequence[str] = ()
) -> TransportSecuritySettings:
    """The DNS-rebinding allow-list for a server bound to `host`, plus the configured names.

    A loopback bind accepts its loopback names; a named bind its name; a wildcard
    bind (`0.0.0.0`) with no configured name cannot know its names, so it checks
    nothing (the proxy in front must). Each name is accepted with any port, and
    its origins are `http(s)://name[:port]`.
    """
    if host in LOOPBACK:
        names = ["127.0.0.1", "localhost", "::1"]
    elif host in _WILDCARD:
        names = []
    else:
        names = [host]
    names += [name for name in allowed_hosts if name not in names]
    if not names:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    shown = [_bracketed(name) for name in names]
    hosts = [pattern for name in shown for pattern in (name, f"{name}:*")]
    origins = [
        f"{scheme}://{name}{port}"
        for name in shown
        for scheme in ("http", "https")
        for port in ("", ":*")
    ]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=origins + [o for o in allowed_origins if o not in origins],
    )


class ReplicaSessionIds:
    """ASGI middleware: this replica's name in front of every `Mcp-Session-Id` it hands out.

    Legacy (2025-11-25) sessions live in the replica that opened them, so a load
    balancer must send a session's requests back there. With the name in the id
    (`replica1.3f2a...`), the balancer can route by it (see `deploy/nginx`); a
    request whose id names another replica was misrouted and is answered 404
    (session not found), after which the client opens a new session.
    """

    def __init__(self, app: ASGIApp, replica: str) -> None:
        if not REPLICA_NAME.fullmatch(replica):
            raise ValueError(f"replica name {replica!r} must match {REPLICA_NAME.pattern}")
        self.app = app
        self._prefix = f"{replica}.".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        prefix = self._prefix
        headers = [
            (name, value.removeprefix(prefix) if name == _SESSION_HEADER else value)
            for name, value in scope.get("headers") or []
        ]

        async def tagged(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = [
                    (name, prefix + value if name.lower() == _SESSION_HEADER else value)
                    for name, value in message.get("headers") or []
                ]
            await send(message)

        await self.app({**scope, "headers": headers}, receive, tagged)
