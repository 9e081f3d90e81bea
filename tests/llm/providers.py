"""The two SDK-backed models as the tests drive them: model, key, and how each wire says things."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from meta_tools.llm import DashScopeChatModel, OpenAIChatModel
from tests.fakes.llm_server import (
    FakeLLMServer,
    dashscope_error,
    dashscope_text_reply,
    dashscope_tool_reply,
    openai_error,
    openai_text_reply,
    openai_tool_reply,
)

__all__ = ["DASHSCOPE", "OPENAI", "Provider"]


@dataclass(frozen=True)
class Provider:
    """One SDK-backed model and how its wire says things."""

    model_class: type[OpenAIChatModel] | type[DashScopeChatModel]
    model_name: str
    key: str
    key_env: str
    """The environment variable read when no key is given."""
    api_path: str
    """The base URL's path on the fake server."""
    text_reply: Callable[..., dict[str, Any]]
    tool_reply: Callable[..., dict[str, Any]]
    error: Callable[[str, str], dict[str, Any]]
    """(code, message) -> an error body."""
    error_detail: Callable[[int, str], str]
    """(status, code) -> how the model's error names the failure."""
    no_choices: dict[str, Any]
    messages: Callable[[dict[str, Any]], list[dict[str, Any]]]
    """The messages of a request body."""
    blank: str | None
    """The content of a turn that is only tool calls, both ways."""

    def base_url(self, server: FakeLLMServer) -> str:
        return f"{server.url}{self.api_path}"

    def make_model(
        self, server: FakeLLMServer, **options: Any
    ) -> OpenAIChatModel | DashScopeChatModel:
        settings: dict[str, Any] = {"api_key": self.key, "backoff_s": 0.01, "max_retries": 2}
        settings.update(options)
        return self.model_class(self.model_name, base_url=self.base_url(server), **settings)


def _openai_no_choices() -> dict[str, Any]:
    body = openai_text_reply("x")
    body["choices"] = []
    return body


OPENAI = Provider(
    model_class=OpenAIChatModel,
    model_name="gpt-test",
    key="sk-test-secret-0123456789",
    key_env="OPENAI_API_KEY",
    api_path="/v1",
    text_reply=openai_text_reply,
    tool_reply=openai_tool_reply,
    error=lambda code, message: openai_error(message, error_type=code),
    error_detail=lambda status, code: f"HTTP {status}",
    no_choices=_openai_no_choices(),
    messages=lambda body: body["messages"],
    blank=None,
)
DASHSCOPE = Provider(
    model_class=DashScopeChatModel,
    model_name="qwen-test",
    key="sk-ds-secret-9876543210",
    key_env="DASHSCOPE_API_KEY",
    api_path="/api/v1",
    text_reply=dashscope_text_reply,
    tool_reply=dashscope_tool_reply,
    error=dashscope_error,
    error_detail=lambda status, code: f"HTTP {status} [{code}]",
    no_choices={"request_id": "r1", "output": {"choices": []}},
    messages=lambda body: body["input"]["messages"],
    blank="",
)
