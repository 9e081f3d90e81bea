"""Provider-neutral chat types: what goes to a model and what comes back."""

from __future__ import annotations

import json
import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..support.text import valid_utf8

__all__ = [
    "ANY_CATEGORY",
    "DECLINE",
    "REQUEST_INPUT",
    "RESERVED_TOOL_NAMES",
    "AssistantTurn",
    "ChatRequest",
    "Message",
    "ToolCall",
    "ToolDefinition",
    "Usage",
    "call_key",
]

REQUEST_INPUT = "request_input"
"""The control call that asks the main agent for input the task lacks."""
DECLINE = "decline"
"""The control call that says no tool can do the task."""
RESERVED_TOOL_NAMES = frozenset({REQUEST_INPUT, DECLINE})
ANY_CATEGORY = "any_category"
"""The tool offered beside a ranked subset of categories: the router picks the category.

No category may have it as its function name."""
"""Names of the category loop's control calls: no tool may take them, or the LLM would be
offered two functions of one name and a call to the tool would be read as the control call."""


def _call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


class ToolCall(BaseModel):
    """One function call requested by the model.

    `arguments` is a dict, or the raw string when the model sent JSON that
    does not parse (the tool layer answers that with an error the model can fix).
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(default_factory=_call_id)
    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class Message(BaseModel):
    """A chat message; `content` may be empty when the message carries tool calls."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    @model_validator(mode="after")
    def _tool_result_names_its_call(self) -> Message:
        if self.role == "tool" and self.tool_call_id is None:
            raise ValueError(
                "a message with role 'tool' needs tool_call_id (the id of the call it answers)"
            )
        return self

    @field_validator("content")
    @classmethod
    def _valid_utf8(cls, content: str) -> str:
        """What reaches a model is valid UTF-8 (a file name may carry undecodable bytes)."""
        return valid_utf8(content)


class AssistantTurn(BaseModel):
    """What the model answered: text, tool calls, or both.

    `recovered` counts the calls that were read back from the text (the model
    wrote them as text, see `llm.recovery`); `unread_call` says why a text that
    looks like a call could not be read, so that the model can be asked again.
    """

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage | None = None
    recovered: int = 0
    unread_call: str | None = None

    @field_validator("tool_calls")
    @classmethod
    def _distinct_ids(cls, calls: list[ToolCall]) -> list[ToolCall]:
        """Each call gets an id of its own: a server may repeat ids within one reply,
        or leave them empty, and results are matched to calls by id."""
        seen: set[str] = set()
        out: list[ToolCall] = []
        for call in calls:
            if not call.id.strip() or call.id in seen:
                call = call.model_copy(update={"id": _call_id()})
            seen.add(call.id)
            out.append(call)
        return out

    def as_message(self) -> Message:
        return Message(role="assistant", content=self.text or "", tool_calls=self.tool_calls)


def _no_parameters() -> dict[str, Any]:
    return {"type": "object", "properties": {}}


class ToolDefinition(BaseModel):
    """A tool as a model is offered it, in no provider's shape.

    Each client turns it into its provider's own (`llm.openai_tools` for the
    OpenAI and DashScope clients, `llm.sampling` for an MCP host's model).

    Attributes:
        name: the function name the model calls.
        description: what the tool does, for the model.
        parameters: the JSON schema (`type: object`) of its arguments.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=_no_parameters)


class ChatRequest(BaseModel):
    """Messages plus the tools offered."""

    messages: list[Message]
    tools: list[ToolDefinition] = Field(default_factory=list)


def call_key(tool: str, arguments: Any) -> str:
    """A call's identity: its tool and its arguments (key order aside)."""
    return f"{tool}:{json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)}"
