"""One browser login to an MCP server: loopback listener, the SDK's flow, the tokens stored.

`log_in` listens on 127.0.0.1 (the port of the last login when it is free, so
that the registration made then still matches), forgets the old tokens, opens a
session through `StoredLoginAuth` with the browser step, and lists the server's
tools to prove the login works. The tokens land in the server's file only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from mcp import Client

from ....exceptions import ToolUnavailableError
from ..failures import describe_failure, login_needed
from ..identity import CLIENT_INFO
from ..listing import list_remote_tools
from ..transports import HttpTransportFactory
from .auth import BrowserStep, OAuthLogin
from .loopback import LoopbackCallback

__all__ = ["LoginOutcome", "log_in"]


@dataclass(frozen=True)
class LoginOutcome:
    """What a login did.

    Attributes:
        stored: the file holding the login; None when the server asked for none.
        tools: how many tools the server listed once logged in.
    """

    stored: Path | None
    tools: int


async def log_in(
    login: OAuthLogin,
    show: Callable[[str], Awaitable[None]],
    *,
    transport: Literal["streamable_http", "sse"] = "streamable_http",
    headers: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    wait_s: float = 300.0,
) -> LoginOutcome:
    """Log in to `login.server` with the browser step; store the tokens; list the tools.

    Args:
        login: the server and where its login is stored.
        show: gets the authorization URL (opens a browser, prints it, or, in tests, follows it).
        transport: the server's transport.
        headers: the entry's static headers, sent beside the login.
        timeout_s: limit for each request to the server.
        wait_s: how long to wait for the browser to come back.

    Raises:
        LoginRequiredError: the browser did not come back in time, or the server refused.
        ToolUnavailableError: the server could not be reached or the OAuth flow failed
            (the message says which step).
    """
    previous = login.store.load(login.server)
    port = 0
    if previous is not None and previous.url == login.url and previous.redirect_uri:
        port = urlsplit(previous.redirect_uri).port or 0
    async with LoopbackCallback(login.server, port=port, timeout_s=wait_s) as callback:
        auth = login.auth(BrowserStep(callback.redirect_uri, show, callback.wait))
        await auth.storage.start_over(callback.redirect_uri)
        factory = HttpTransportFactory(
            transport, login.url, dict(headers or {}), timeout_s, auth=lambda: auth
        )
        try:
            async with Client(
                factory(), read_timeout_seconds=timeout_s, cache=None, client_info=CLIENT_INFO
            ) as client:
                tools = await list_remote_tools(client, login.server)
        except Exception as exc:  # every failure of the session, said in one line
            needed = login_needed(exc)
            if needed is not None:
                raise needed from None
            reason = describe_failure(exc)
            raise ToolUnavailableError(
                f"cannot log in to MCP server {login.server!r}: {reason}"
            ) from None
    if auth.storage.login.tokens is None:
        return LoginOutcome(None, len(tools))
    return LoginOutcome(login.store.path(login.server), len(tools))
