"""The local end of a browser login: a one-shot HTTP listener on 127.0.0.1 for the redirect.

    async with LoopbackCallback() as callback:
        callback.redirect_uri          # http://127.0.0.1:<port>/callback
        result = await callback.wait() # the code and state the browser brought back

Only `GET /callback` is answered; the first request carrying a `code` (or an
`error`) settles the login and later ones are told it is over. Requests are read
with a size cap and a deadline, so a stray client cannot hold the listener.
"""

from __future__ import annotations

import contextlib
from html import escape
from types import TracebackType
from urllib.parse import parse_qs, urlsplit

import anyio
from anyio.abc import SocketStream, TaskGroup
from mcp.shared.auth import AuthorizationCodeResult

from ....exceptions import LoginRequiredError

__all__ = ["LoopbackCallback"]

CALLBACK_PATH = "/callback"
_MAX_REQUEST_BYTES = 16_384
_READ_TIMEOUT_S = 10.0


class LoopbackCallback:
    """A listener on 127.0.0.1 that receives the authorization server's redirect.

    Args:
        server: the MCP server being logged in to (named in errors and on the page).
        port: the port to listen on; 0 (or a port already taken) picks a free one.
        timeout_s: how long `wait` waits for the browser.
    """

    def __init__(self, server: str, *, port: int = 0, timeout_s: float = 300.0) -> None:
        self.server = server
        self.timeout_s = timeout_s
        self._port = port
        self._result: AuthorizationCodeResult | None = None
        self._error: str | None = None
        self._done = anyio.Event()
        self._group: TaskGroup | None = None
        self.port = 0

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def __aenter__(self) -> LoopbackCallback:
        try:
            listener = await anyio.create_tcp_listener(
                local_host="127.0.0.1", local_port=self._port
            )
        except OSError:
            if self._port == 0:
                raise
            listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        group.start_soon(self._serve, listener)
        return self

    async def _serve(self, listener: anyio.abc.Listener[SocketStream]) -> None:
        async with listener:
            await listener.serve(self._answer)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    async def wait(self) -> AuthorizationCodeResult:
        """The code and state of the redirect.

        Raises:
            LoginRequiredError: the browser did not come back within `timeout_s`, or the
                authorization server reported an error (its words are in the message).
        """
        with anyio.move_on_after(self.timeout_s):
            await self._done.wait()
        if self._result is not None:
            return self._result
        reason = self._error or f"no answer from the browser within {self.timeout_s:g} s"
        raise LoginRequiredError(self.server, reason)

    async def _answer(self, stream: SocketStream) -> None:
        async with stream:
            with anyio.move_on_after(_READ_TIMEOUT_S):
                head = await _read_head(stream)
                status, body = self._settle(head)
                page = f"<!doctype html><title>meta-tools login</title><p>{escape(body)}</p>"
                encoded = page.encode()
                with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await stream.send(
                        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                        f"Content-Length: {len(encoded)}\r\nConnection: close\r\n\r\n".encode()
                        + encoded
                    )

    def _settle(self, head: bytes) -> tuple[str, str]:
        """The status and message for one request; the first good one settles the login."""
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = request_line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", "Only GET is answered here."
        target = urlsplit(parts[1])
        if target.path != CALLBACK_PATH:
            return "404 Not Found", "Nothing here."
        if self._done.is_set():
            return "409 Conflict", "This login is already over; you can close this tab."
        query = {k: v[0] for k, v in parse_qs(target.query).items()}
        if "error" in query:
            said = query.get("error_description") or query["error"]
            self._error = f"the authorization server refused: {said}"
            self._done.set()
            return "200 OK", f"Login to {self.server} failed: {said}"
        if not query.get("code"):
            return "400 Bad Request", "The redirect carries no authorization code."
        self._result = AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )
        self._done.set()
        return "200 OK", f"Logged in to {self.server}. You can close this tab."


async def _read_head(stream: SocketStream) -> bytes:
    """The request line and headers, at most `_MAX_REQUEST_BYTES`."""
    head = b""
    while b"\r\n\r\n" not in head and len(head) < _MAX_REQUEST_BYTES:
        try:
            head += await stream.receive(4096)
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            break
    return head
