"""`SdkChatModel`: what the SDK-backed clients share (key, retries, closing, the request skeleton).

`OpenAIChatModel` and `DashScopeChatModel` differ only in their wire formats
and error types; the steps of a call are the same, so they live here once.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from ..exceptions import ClosedError
from ..support.lifecycle import AsyncCloseable
from .base import GenerationOptions
from .keys import resolve_api_key
from .recovery import arecover_turn
from .retry import Failure, RetryPolicy, call_with_retries
from .types import AssistantTurn, ChatRequest

__all__ = ["SdkChatModel"]

CompletionT = TypeVar("CompletionT")


class SdkChatModel(AsyncCloseable, Generic[CompletionT]):
    """A `ChatModel` that sends each request through a provider SDK and `call_with_retries`.

    A subclass builds its SDK client (with the SDK's own retries off) and
    implements `base_url`, `_attempt`, `_to_turn`, `_classify` and `_close_client`.
    With `recover_text_calls`, tool calls the model wrote as text are read back
    into calls (`llm.recovery`).

    Raises:
        ModelError: no API key was given or found, and `base_url` (where requests go,
            when known before the client is built) is not on this machine.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None,
        api_key_env: str,
        max_retries: int,
        backoff_s: float,
        timeout: float,
        options: GenerationOptions,
        recover_text_calls: bool,
        base_url: str | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.options = options
        self.recover_text_calls = recover_text_calls
        self._policy = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
        self._api_key = resolve_api_key(
            api_key, api_key_env, f"{type(self).__name__}({model!r})", base_url=base_url
        )
        self._closed = False

    @property
    @abstractmethod
    def base_url(self) -> str:
        """The API root requests go to."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r})"

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """Send one request and return the model's turn.

        Raises:
            ClosedError: `aclose` was called.
            ModelError: retries exhausted, a non-retryable error, or a response
                without choices (not retried: the server answered).
        """
        if self._closed:
            raise ClosedError(f"{self!r} was closed; create a new model to send requests")
        completion = await call_with_retries(
            self._attempt(request),
            classify=self._classify,
            policy=self._policy,
            endpoint=self.base_url,
            model=self.model,
            secrets=(self._api_key,),
            timeout_s=self.timeout,
        )
        turn = self._to_turn(completion)
        return await arecover_turn(turn, request) if self.recover_text_calls else turn

    async def aclose(self) -> None:
        """Close the HTTP connection pool; calling it twice is harmless."""
        if not self._closed:
            self._closed = True
            await self._close_client()

    @abstractmethod
    def _attempt(self, request: ChatRequest) -> Callable[[], Awaitable[CompletionT]]:
        """Convert `request` to the wire once; return what sends it (called once per attempt)."""

    @abstractmethod
    def _to_turn(self, completion: CompletionT) -> AssistantTurn:
        """The provider's answer as an `AssistantTurn`.

        Raises:
            ModelError: the answer has no choices (or is no completion at all).
        """

    @staticmethod
    @abstractmethod
    def _classify(exc: Exception) -> Failure | None:
        """The SDK's exception as a `Failure` the retry loop understands; None if it is none."""

    @abstractmethod
    async def _close_client(self) -> None:
        """Close the SDK client (called once)."""
