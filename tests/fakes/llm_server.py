"""A fake LLM server over a real socket: OpenAI chat completions and DashScope native.

It replays scripted replies in order, then falls back to a responder (by
default a 500 that says the script ran out), and records every request.
Routes:

- ``POST /v1/chat/completions`` and ``POST /compatible-mode/v1/chat/completions``
  (OpenAI wire; base URLs `openai_base_url`, `compatible_base_url`)
- ``POST /api/v1/services/aigc/text-generation/generation`` (DashScope native,
  as sent by ``dashscope.AsyncClient(protocol="native")``; base URL
  `dashscope_base_url`)

Use it as a context manager or through the `llm_server` fixture::

    def test_x(llm_server: FakeLLMServer) -> None:
        llm_server.enqueue(Reply(body=openai_text_reply("hi")))
        model = OpenAIChatModel("m", base_url=llm_server.openai_base_url, api_key="k")
        ...
        assert llm_server.requests[0].body["messages"] == [...]

The server runs in its own thread and event loop, so it serves sync and
async tests alike (and subprocesses, via the base URLs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

__all__ = [
    "DASHSCOPE_PATH",
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "Responder",
    "dashscope_error",
    "dashscope_text_reply",
    "dashscope_tool_reply",
    "llm_server",
    "llm_server_session",
    "openai_error",
    "openai_text_reply",
    "openai_tool_reply",
    "wire_tool_call",
]

DASHSCOPE_PATH = "/api/v1/services/aigc/text-generation/generation"

RouteName = Literal["openai", "dashscope"]


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP answer.

    Attributes:
        body: JSON-able body; a `str` is sent as plain text (for malformed replies).
        status: HTTP status code.
        headers: Extra response headers, e.g. ``{"Retry-After": "0"}``.
        delay: Seconds to wait before answering (cut short when the server stops).
    """

    body: Any = None
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received; `headers` has lower-case names."""

    route: RouteName
    path: str
    headers: dict[str, str]
    body: Any


Responder = Callable[[RecordedRequest], Reply]


def _script_ran_out(request: RecordedRequest) -> Reply:
    message = f"fake LLM server: no reply scripted for this {request.route} request"
    if request.route == "dashscope":
        return Reply(status=500, body=dashscope_error("InternalError", message))
    return Reply(status=500, body=openai_error(message))


class FakeLLMServer:
    """The fake server; `start` binds a free port on 127.0.0.1, `stop` shuts it down."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._responder: Responder = _script_ran_out
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closing: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._socket: socket.socket | None = None
        self.port = 0
        self.models: list[str] | None = None
        """What ``GET /v1/models`` lists (None: the route answers 404, as some servers do)."""

    # -- scripting ---------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Add replies to answer the next requests with, in order."""
        with self._lock:
            self._replies.extend(replies)

    def respond_with(self, responder: Responder | Reply) -> None:
        """Answer with `responder` once the queue is empty (a `Reply` repeats forever)."""
        if isinstance(responder, Reply):
            reply = responder
            self._responder = lambda _request: reply
        else:
            self._responder = responder

    def reset(self) -> None:
        """Forget recorded requests, queued replies and the responder; end delayed replies."""
        with self._lock:
            self.requests.clear()
            self._replies.clear()
            self._responder = _script_ran_out
            self.models = None
        self._release_delayed()

    @property
    def request_count(self) -> int:
        """How many requests arrived, on any route."""
        return len(self.requests)

    @property
    def pending(self) -> int:
        """Queued replies not yet sent."""
        return len(self._replies)

    # -- addresses ---------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_base_url(self) -> str:
        """Base URL for ``AsyncOpenAI`` / `OpenAIChatModel`."""
        return f"{self.url}/v1"

    @property
    def compatible_base_url(self) -> str:
        """DashScope's OpenAI-compatible mode path (same handler as `openai_base_url`)."""
        return f"{self.url}/compatible-mode/v1"

    @property
    def dashscope_base_url(self) -> str:
        """Base URL for ``dashscope.AsyncClient`` / `DashScopeChatModel` (native)."""
        return f"{self.url}/api/v1"

    # -- lifecycle ---------------------------------------------------------

    def start(self, *, startup_timeout: float = 10.0) -> None:
        """Bind a free port and serve from a background thread."""
        if self._thread is not None:
            raise RuntimeError("FakeLLMServer is already started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        # Listening now lets clients connect (into the backlog) before uvicorn accepts.
        sock.listen(128)
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app(),
            log_level="warning",
            lifespan="on",
            loop="asyncio",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(
            target=lambda: server.run(sockets=[sock]), name="fake-llm-server", daemon=True
        )
        self._thread.start()
        if not self._ready.wait(startup_timeout):
            self.stop()
            raise RuntimeError("fake LLM server did not start")

    def stop(self) -> None:
        """Release delayed replies, shut the server down and wait for its thread."""
        self._release_delayed()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._socket is not None:
            self._socket.close()
        self._thread = self._server = self._socket = None

    def _release_delayed(self) -> None:
        """Answer every reply still in its delay now (runs in the server's loop)."""

        def release() -> None:
            if self._closing is not None:
                self._closing.set()
            self._closing = asyncio.Event()

        if self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already ended
                self._loop.call_soon_threadsafe(release)

    def __enter__(self) -> FakeLLMServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- the app -----------------------------------------------------------

    def _app(self) -> Starlette:
        @contextlib.asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            self._loop = asyncio.get_running_loop()
            self._closing = asyncio.Event()
            self._ready.set()
            yield

        async def openai(request: Request) -> Response:
            return await self._handle("openai", request)

        async def dashscope(request: Request) -> Response:
            return await self._handle("dashscope", request)

        async def models(_request: Request) -> Response:
            if self.models is None:
                return JSONResponse(openai_error("not found", error_type="not_found"), 404)
            listed = [{"id": name, "object": "model", "owned_by": "local"} for name in self.models]
            return JSONResponse({"object": "list", "data": listed})

        return Starlette(
            routes=[
                Route("/v1/chat/completions", openai, methods=["POST"]),
                Route("/v1/models", models, methods=["GET"]),
                Route("/compatible-mode/v1/chat/completions", openai, methods=["POST"]),
                Route(DASHSCOPE_PATH, dashscope, methods=["POST"]),
            ],
            lifespan=lifespan,
        )

    async def _handle(self, route: RouteName, request: Request) -> Response:
        raw = await request.body()
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode(errors="replace")
        recorded = RecordedRequest(
            route=route,
            path=request.url.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=body,
        )
        with self._lock:
            self.requests.append(recorded)
            reply = self._replies.popleft() if self._replies else None
        if reply is None:
            reply = self._responder(recorded)
        if reply.delay > 0 and self._closing is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.delay)
        if isinstance(reply.body, str):
            return Response(reply.body, reply.status, dict(reply.headers), "text/plain")
        return JSONResponse(reply.body, reply.status, dict(reply.headers))


@pytest.fixture(scope="session")
def llm_server_session() -> Iterator[FakeLLMServer]:
    """One `FakeLLMServer` for the whole session (starting one costs ~0.2 s)."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(llm_server_session: FakeLLMServer) -> Iterator[FakeLLMServer]:
    """The session's `FakeLLMServer`, reset before and after the test.

    Import both fixtures into a ``conftest.py``:
    ``from tests.fakes.llm_server import llm_server, llm_server_session``.
    """
    llm_server_session.reset()
    yield llm_server_session
    llm_server_session.reset()


# -- reply bodies -------------------------------------------------------------


def wire_tool_call(call_id: str, name: str, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    """A tool call as both wires carry it; a `str` `arguments` is sent verbatim."""
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def _openai_completion(
    message: dict[str, Any], finish: str, usage: tuple[int, int]
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def openai_text_reply(text: str, *, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A chat.completion whose message is plain text; `usage` is (prompt, completion)."""
    return _openai_completion({"role": "assistant", "content": text}, "stop", usage)


def openai_tool_reply(
    *calls: dict[str, Any], text: str | None = None, usage: tuple[int, int] = (10, 5)
) -> dict[str, Any]:
    """A chat.completion asking for the tool calls built by `wire_tool_call`."""
    message = {"role": "assistant", "content": text, "tool_calls": list(calls)}
    return _openai_completion(message, "tool_calls", usage)


def openai_error(message: str, *, error_type: str = "server_error") -> dict[str, Any]:
    """An OpenAI error body."""
    return {"error": {"message": message, "type": error_type, "param": None, "code": None}}


def _dashscope_generation(
    message: dict[str, Any], finish: str, usage: tuple[int, int]
) -> dict[str, Any]:
    return {
        "request_id": "req-fake",
        "output": {"choices": [{"finish_reason": finish, "message": message}]},
        "usage": {
            "input_tokens": usage[0],
            "output_tokens": usage[1],
            "total_tokens": usage[0] + usage[1],
        },
    }


def dashscope_text_reply(text: str, *, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    """A native generation reply (result_format "message") with plain text."""
    return _dashscope_generation({"role": "assistant", "content": text}, "stop", usage)


def dashscope_tool_reply(
    *calls: dict[str, Any], text: str = "", usage: tuple[int, int] = (10, 5)
) -> dict[str, Any]:
    """A native generation reply asking for the tool calls built by `wire_tool_call`."""
    indexed = [{**call, "index": i} for i, call in enumerate(calls)]
    message = {"role": "assistant", "content": text, "tool_calls": indexed}
    return _dashscope_generation(message, "tool_calls", usage)


def dashscope_error(code: str, message: str) -> dict[str, Any]:
    """A native error body, e.g. ``dashscope_error("Throttling", "slow down")``."""
    return {"request_id": "req-fake", "code": code, "message": message}
