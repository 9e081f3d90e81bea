"""Notice that an HTTP client went away, so that its call can be cancelled in both protocol eras.

On a 2025-11-25 (legacy) streamable-HTTP session the SDK keeps serving a
request whose client has vanished; the call would run on, and a sampling call
would wait for an answer that can never come. `DisconnectWatch` (ASGI
middleware) puts an event in each HTTP request's scope that is set when the
server reads `http.disconnect`; `cancel_on_disconnect` ends the call then.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DISCONNECTED", "DisconnectWatch", "cancel_on_disconnect"]

DISCONNECTED = "meta_tools.disconnected"
"""The scope key of the `anyio.Event` set when the request's client has gone."""

T = TypeVar("T")


class DisconnectWatch:
    """ASGI middleware: `scope[DISCONNECTED]` is set once the client disconnects."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        gone = anyio.Event()
        scope[DISCONNECTED] = gone

        async def watched() -> Message:
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
            return message

        try:
            await self.app(scope, watched, send)
        finally:
            gone.set()  # the response is over: nobody is waiting for this request any more


def disconnected_event(request: Any) -> anyio.Event | None:
    """The disconnect event of the HTTP request being served, if there is one."""
    scope = getattr(request, "scope", None)
    found = scope.get(DISCONNECTED) if isinstance(scope, dict) else None
    return found if isinstance(found, anyio.Event) else None


async def cancel_on_disconnect(request: Any, call: Callable[[], Awaitable[T]]) -> T | None:
    """Run `call`; cancel it (and return None) if the request's client disconnects first."""
    gone = disconnected_event(request)
    if gone is None:
        return await call()
    result: list[T] = []
    async with anyio.create_task_group() as group:

        async def watch() -> None:
            await gone.wait()
            group.cancel_scope.cancel()

        group.start_soon(watch)
        result.append(await call())
        group.cancel_scope.cancel()
    return result[0] if result else None
