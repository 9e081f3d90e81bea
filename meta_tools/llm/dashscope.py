"""`DashScopeChatModel`: Qwen models over DashScope's native protocol, via the dashscope SDK.

Uses the 2.x ``dashscope.AsyncClient`` with ``protocol="native"``: requests go
to ``{base_url}/services/aigc/text-generation/generation`` with a body of
``{"model", "input": {"messages"}, "parameters": {"result_format": "message",
"tools", "tool_choice"}}``. The SDK builds its requests with
``asyncio.to_thread``, so this model needs the asyncio backend.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import dashscope
from dashscope.v2 import errors as ds_errors
from dashscope.v2.types.completions import ChatCompletion
from dashscope.v2.types.messages import MessageInput

from ..exceptions import ModelError
from .arguments import dump_arguments, load_arguments
from .base import GenerationOptions
from .defaults import BACKOFF_S, KEY_ENV, MAX_RETRIES, TIMEOUT_S
from .openai_tools import openai_tool
from .retry import Failure, connection_failure, is_retryable_status, retry_after_from_headers
from .sdk import SdkChatModel
from .types import AssistantTurn, ChatRequest, Message, ToolCall, Usage

__all__ = ["DashScopeChatModel"]

#: Errors DashScope may report with HTTP 200 and a business code; still worth a retry.
_RETRYABLE_ERRORS = (
    ds_errors.RateLimitError,
    ds_errors.InternalServerError,
    ds_errors.ServiceUnavailableError,
    ds_errors.GatewayTimeoutError,
)


def _to_wire(message: Message) -> dict[str, Any]:
    # DashScope's native examples send "" (not null) beside tool calls.
    wire: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        wire["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": dump_arguments(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.role == "tool":
        wire["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        wire["name"] = message.name
    return wire


class DashScopeChatModel(SdkChatModel[ChatCompletion]):
    """A `ChatModel` backed by ``dashscope.AsyncClient`` (native protocol).

    The SDK's own retries are off; `call_with_retries` retries 429, 5xx,
    connection errors and timeouts up to `max_retries` times.

    Args:
        model: The model name, e.g. ``"qwen-plus"``.
        base_url: The native API root, e.g. ``"https://dashscope.aliyuncs.com/api/v1"``;
            the SDK's resolution (``DASHSCOPE_BASE_URL``, workspace, region) when None.
        api_key: The key; read from the environment variable `api_key_env` when None.
        api_key_env: Where to find the key when `api_key` is not given.
        timeout: Seconds per request attempt; a request that times out is sent once more at most.
        max_retries: Retries after the first attempt.
        backoff_s: First backoff delay; doubles on every retry.
        options: Generation options sent with every request (`extra_body` goes to
            DashScope's `parameters`).
        recover_text_calls: Read tool calls the model wrote as text back into calls
            (off by default: DashScope parses Qwen's calls itself).

    Raises:
        ModelError: no API key was given or found.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = KEY_ENV["dashscope"],
        timeout: float = TIMEOUT_S,
        max_retries: int = MAX_RETRIES,
        backoff_s: float = BACKOFF_S,
        options: GenerationOptions | None = None,
        recover_text_calls: bool = False,
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
        )
        self._client = dashscope.AsyncClient(
            api_key=self._api_key,
            base_url=base_url,
            protocol="native",
            timeout=timeout,
            max_retries=0,
        )

    @property
    def base_url(self) -> str:
        """The API root requests go to."""
        return str(self._client.config.protocol_base_url)

    def _attempt(self, request: ChatRequest) -> Callable[[], Awaitable[ChatCompletion]]:
        messages: list[MessageInput] = [_to_wire(message) for message in request.messages]
        tools = [openai_tool(t) for t in request.tools] or None
        options = self.options
        parameters = dict(options.extra_body) if options.extra_body else None

        async def attempt() -> ChatCompletion:
            return await self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                tools=tools,
                tool_choice="auto" if tools else None,
                max_tokens=options.max_tokens,
                temperature=options.temperature,
                top_p=options.top_p,
                seed=options.seed,
                parameters=parameters,
                # Sent per call as well: a client-level key is dropped when
                # the SDK is handed its own http_client.
                api_key=self._api_key,
            )

        return attempt

    def _to_turn(self, completion: ChatCompletion) -> AssistantTurn:
        if not completion.choices:
            raise ModelError(
                f"model {self.model!r} at {self.base_url!r} returned no choices"
                f" (request id {completion.request_id!r})"
            )
        message = completion.choices[0].message
        calls: list[ToolCall] = []
        for call in message.tool_calls or []:
            arguments = load_arguments(call.function.arguments)
            name = call.function.name or ""
            if call.id:
                calls.append(ToolCall(id=call.id, name=name, arguments=arguments))
            else:
                calls.append(ToolCall(name=name, arguments=arguments))
        usage = None
        if completion.usage is not None:
            usage = Usage(
                prompt_tokens=completion.usage.input_tokens,
                completion_tokens=completion.usage.output_tokens,
            )
        return AssistantTurn(text=message.content, tool_calls=calls, usage=usage)

    @staticmethod
    def _classify(exc: Exception) -> Failure | None:
        # APITimeoutError subclasses APIConnectionError: test it first.
        if isinstance(exc, ds_errors.APITimeoutError):
            return Failure("request timed out", retryable=True, timed_out=True)
        if isinstance(exc, ds_errors.APIConnectionError):
            return connection_failure(exc)
        if isinstance(exc, ds_errors.DashScopeError):
            status = exc.status_code
            code = f" [{exc.code}]" if exc.code else ""
            retryable = isinstance(exc, _RETRYABLE_ERRORS) or (
                status is not None and is_retryable_status(status)
            )
            return Failure(
                f"HTTP {status}{code}: {exc.message}",
                retryable=retryable,
                retry_after=retry_after_from_headers(exc.headers),
            )
        if isinstance(exc, ValueError):
            # The SDK raises plain ValueError (or pydantic's ValidationError) for
            # a body it cannot parse or a message it cannot send.
            return Failure(f"invalid request or response: {exc}", retryable=False)
        return None

    async def _close_client(self) -> None:
        await self._client.aclose()
