"""`OpenAIChatModel`: any OpenAI-compatible chat-completions endpoint, via the openai SDK."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import cast

import httpx2
import openai
from openai import AsyncOpenAI, omit
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionAssistantMessageParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionToolUnionParam,
)

from ..exceptions import ModelError
from .arguments import dump_arguments, load_arguments
from .base import GenerationOptions
from .defaults import BACKOFF_S, KEY_ENV, MAX_RETRIES, TIMEOUT_S
from .openai_tools import openai_tool
from .retry import Failure, connection_failure, is_retryable_status, retry_after_from_headers
from .sdk import SdkChatModel
from .types import AssistantTurn, ChatRequest, Message, ToolCall, Usage

__all__ = ["OpenAIChatModel"]


def _to_wire(message: Message) -> ChatCompletionMessageParam:
    if message.role == "tool":
        assert message.tool_call_id is not None  # `Message` requires it for this role
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant":
        wire: ChatCompletionAssistantMessageParam = {
            "role": "assistant",
            # OpenAI wants null, not "", when the turn is only tool calls.
            "content": message.content if message.content or not message.tool_calls else None,
        }
        if message.tool_calls:
            wire["tool_calls"] = [_call_to_wire(call) for call in message.tool_calls]
        if message.name is not None:
            wire["name"] = message.name
        return wire
    if message.role == "system":
        if message.name is not None:
            return {"role": "system", "content": message.content, "name": message.name}
        return {"role": "system", "content": message.content}
    if message.name is not None:
        return {"role": "user", "content": message.content, "name": message.name}
    return {"role": "user", "content": message.content}


def _call_to_wire(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": dump_arguments(call.arguments)},
    }


class OpenAIChatModel(SdkChatModel[ChatCompletion]):
    """A `ChatModel` backed by ``openai.AsyncOpenAI`` (OpenAI, Qwen compatible mode, vLLM...).

    The SDK's own retries are off; `call_with_retries` retries 429, 5xx,
    connection errors and timeouts up to `max_retries` times.

    Args:
        model: The model name sent with every request.
        base_url: The API root, e.g. ``"https://api.openai.com/v1"``; the SDK
            default (``OPENAI_BASE_URL`` or OpenAI) when None.
        api_key: The key; read from the environment variable `api_key_env` when None.
            None is fine for a `base_url` (or ``OPENAI_BASE_URL``) on this machine.
        api_key_env: Where to find the key when `api_key` is not given.
        timeout: Seconds per request attempt; a request that times out is sent once more at most.
        max_retries: Retries after the first attempt.
        backoff_s: First backoff delay; doubles on every retry.
        options: Generation options (`max_tokens`, `temperature`, ...) sent with every request.
        recover_text_calls: Read tool calls the model wrote as text back into calls
            (off by default: the loop does it under the `small` guard profile).
        http_client: An ``httpx2.AsyncClient`` to send requests with (tests,
            proxies); the SDK closes it in `aclose`.

    Raises:
        ModelError: no API key was given or found, and the endpoint is not on this machine.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = KEY_ENV["openai"],
        timeout: float = TIMEOUT_S,
        max_retries: int = MAX_RETRIES,
        backoff_s: float = BACKOFF_S,
        options: GenerationOptions | None = None,
        recover_text_calls: bool = False,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            api_key_env=api_key_env,
            max_retries=max_retries,
            backoff_s=backoff_s,
            timeout=timeout,
            options=options or GenerationOptions(),
            recover_text_calls=recover_text_calls,
            base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
        )
        self._client = AsyncOpenAI(
            api_key=self._api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            http_client=http_client,
        )

    @property
    def base_url(self) -> str:
        """The API root requests go to."""
        return str(self._client.base_url)

    async def served_models(self, timeout_s: float = 5.0) -> list[str]:
        """The models the server says it serves (``GET /models``), for a name nobody gave.

        One attempt, `timeout_s` at most; a server that cannot say gives an empty list.
        """
        try:
            page = await self._client.with_options(timeout=timeout_s).models.list()
        except (openai.OpenAIError, ValueError):
            return []
        return [model.id for model in page.data if isinstance(model.id, str) and model.id]

    def _attempt(self, request: ChatRequest) -> Callable[[], Awaitable[ChatCompletion]]:
        messages = [_to_wire(message) for message in request.messages]
        tools = cast("list[ChatCompletionToolUnionParam]", [openai_tool(t) for t in request.tools])
        options = self.options
        extra_body = dict(options.extra_body) if options.extra_body else None

        async def attempt() -> ChatCompletion:
            return await self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                tools=tools if tools else omit,
                tool_choice="auto" if tools else omit,
                max_tokens=omit if options.max_tokens is None else options.max_tokens,
                temperature=omit if options.temperature is None else options.temperature,
                top_p=omit if options.top_p is None else options.top_p,
                seed=omit if options.seed is None else options.seed,
                extra_body=extra_body,
            )

        return attempt

    def _to_turn(self, completion: ChatCompletion) -> AssistantTurn:
        # The SDK hands back the raw text when a 200 reply is not JSON.
        if not isinstance(completion, ChatCompletion):
            raise ModelError(
                f"model {self.model!r} at {self.base_url!r} did not answer with a chat"
                f" completion: {str(completion)[:200]!r}"
            )
        if not completion.choices:
            raise ModelError(
                f"model {self.model!r} at {self.base_url!r} returned no choices"
                f" (response id {completion.id!r})"
            )
        message = completion.choices[0].message
        calls: list[ToolCall] = []
        for call in message.tool_calls or []:
            if isinstance(call, ChatCompletionMessageFunctionToolCall):
                arguments = load_arguments(call.function.arguments)
                calls.append(ToolCall(id=call.id, name=call.function.name, arguments=arguments))
            else:  # a custom (free-text) tool call: keep its raw input
                calls.append(
                    ToolCall(id=call.id, name=call.custom.name, arguments=call.custom.input)
                )
        usage = None
        if completion.usage is not None:
            usage = Usage(
                prompt_tokens=completion.usage.prompt_tokens,
                completion_tokens=completion.usage.completion_tokens,
            )
        return AssistantTurn(text=message.content, tool_calls=calls, usage=usage)

    @staticmethod
    def _classify(exc: Exception) -> Failure | None:
        # APITimeoutError subclasses APIConnectionError: test it first.
        if isinstance(exc, openai.APITimeoutError):
            return Failure("request timed out", retryable=True, timed_out=True)
        if isinstance(exc, openai.APIConnectionError):
            return connection_failure(exc)
        if isinstance(exc, openai.APIStatusError):
            detail = exc.message.removeprefix(f"Error code: {exc.status_code} - ")
            return Failure(
                f"HTTP {exc.status_code}: {detail}",
                retryable=is_retryable_status(exc.status_code),
                retry_after=retry_after_from_headers(exc.response.headers),
            )
        if isinstance(exc, openai.OpenAIError):
            return Failure(f"{type(exc).__name__}: {exc}", retryable=False)
        if isinstance(exc, ValueError):
            # e.g. a 200 reply whose JSON does not parse.
            return Failure(f"invalid request or response: {exc}", retryable=False)
        return None

    async def _close_client(self) -> None:
        await self._client.close()
