"""`BaseTool` and `ToolParameter`: the level-1 tool contract every source implements."""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import anyio
import anyio.to_thread
from mcp.types import Tool as McpTool
from pydantic import BaseModel, ConfigDict

from ..exceptions import ToolError, ToolExecutionError, ToolTimeoutError
from ..support.lifecycle import is_cancellation
from .schema import args_model_from_parameters, validate_arguments

__all__ = [
    "BaseTool",
    "PromptType",
    "ToolAnswer",
    "ToolContext",
    "ToolParameter",
    "timeout_error",
    "tool_document",
]

PromptType = Literal["default", "openai"]


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What the runtime injects into a tool: never part of the schema the LLM sees."""

    tool_call_id: str
    category: str | None = None
    run_id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """What one call of a tool gave: a value or a `ToolError`.

    `cached` is None for a tool without a cache, else whether the cache answered.
    """

    value: Any = None
    error: ToolError | None = None
    cached: bool | None = None

    def result(self) -> Any:
        """The value, or the error raised."""
        if self.error is not None:
            raise self.error
        return self.value


def timeout_error(tool: str, timeout: float | None) -> ToolTimeoutError:
    """The error of a call of `tool` cancelled after `timeout` seconds (never None then)."""
    return ToolTimeoutError(f"tool {tool!r} did not finish within {timeout:g} s")


class ToolParameter(BaseModel):
    """One parameter of a tool, as shown in the default prompt format.

    `json_schema` keeps the full property schema when there is more to it
    than a type (enums, items, nested objects); the prompt shows `type`.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    type: str
    description: str
    required: bool = True
    json_schema: dict[str, Any] | None = None

    def prompt_entry(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "required": self.required,
        }

    def property_schema(self) -> dict[str, Any]:
        if self.json_schema is None:
            return {"type": self.type, "description": self.description}
        rest = {k: v for k, v in self.json_schema.items() if k not in ("type", "description")}
        head = {"type": self.json_schema["type"]} if "type" in self.json_schema else {}
        tail = {"description": self.description} if self.description else {}
        return {**head, **rest, **tail}


def _message(exc: BaseException) -> str:
    """`str(exc)`, or a placeholder when the exception cannot print itself."""
    try:
        return str(exc)
    except BaseException as raised:
        if is_cancellation(raised):
            raise
        return "<the error message could not be printed>"


@dataclass(frozen=True, slots=True)
class _Raised:
    """What a sync tool raised in its worker thread, carried back as a value."""

    error: BaseException


def _run_into(box: list[Any], func: Callable[..., Any], values: dict[str, Any]) -> None:
    """Call `func` in a worker thread and hand its result (or what it raised) over in `box`.

    An idle anyio worker keeps a reference to the last value it returned until
    its next job, which would pin a large result in memory. Whatever the tool
    raises stays in the box: a `GeneratorExit` or `KeyboardInterrupt` crossing
    the thread boundary would be thrown into the event loop's own machinery.
    """
    try:
        box.append(func(**values))
    except BaseException as exc:  # nothing in a worker thread is a cancellation of ours
        box.append(_Raised(exc))


class BaseTool(ABC):
    """A tool: a name, a description, parameters, and a way to execute it.

    Subclasses implement `name`, `description`, `args` and `execute` (or set
    `is_async` and implement `async_execute`). Everything else (schemas,
    prompts, validated calls) is derived here, so a subclass need not call
    `super().__init__()`.
    """

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def description(self) -> str: ...

    @property
    @abstractmethod
    def args(self) -> dict[str, ToolParameter]: ...

    @property
    def is_async(self) -> bool:
        return False

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"tool {self.name!r} has no synchronous execute()")

    async def async_execute(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"tool {self.name!r} has no async_execute()")

    @cached_property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model that validates every call of this tool."""
        return args_model_from_parameters(
            self.name,
            {key: (p.json_schema or {"type": p.type}, p.required) for key, p in self.args.items()},
        )

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        """JSON schema (`type: object`) of the arguments, as offered to the LLM."""
        return {
            "type": "object",
            "properties": {key: p.property_schema() for key, p in self.args.items()},
            "required": [key for key, p in self.args.items() if p.required],
        }

    def openai_schema(self) -> dict[str, Any]:
        """The tool as an OpenAI function tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters_schema,
            },
        }

    def mcp_tool(self) -> McpTool:
        """The tool in MCP shape (name, description, inputSchema)."""
        return McpTool(
            name=self.name, description=self.description, input_schema=self.parameters_schema
        )

    async def get_prompt(self, prompt_type: PromptType = "default") -> str:
        """The tool described in one line of prompt text (DB-GPT's format)."""
        if prompt_type == "openai":
            parameters = json.dumps(self.parameters_schema, ensure_ascii=False)
        else:
            entries = [p.prompt_entry() for p in self.args.values()]
            parameters = json.dumps(entries, ensure_ascii=False)
        return (
            f"{self.name}: Call this tool to interact with the {self.name} API. "
            f"What is the {self.name} API useful for? {self.description} "
            f"Parameters: {parameters}"
        )

    def validate_arguments(self, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Coerce and check LLM arguments; raises `ToolArgumentsError` listing every problem."""
        return validate_arguments(self.name, self.args_model, arguments)

    def injected_arguments(self, context: ToolContext) -> dict[str, Any]:
        """Runtime-filled parameters (`tool_call_id`, the context); none by default."""
        return {}

    async def call(
        self, arguments: Mapping[str, Any] | str | None, *, context: ToolContext | None = None
    ) -> Any:
        """Validate `arguments` and run the tool; sync tools run in a worker thread.

        Raises:
            ToolError: invalid arguments, or the tool raised (wrapped as ToolExecutionError).
        """
        values = self.validate_arguments(arguments)
        if context is not None:
            values.update(self.injected_arguments(context))
        try:
            if self.is_async:
                return await self.async_execute(**values)
            box: list[Any] = []
            run = functools.partial(_run_into, box, self.execute, values)
            await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
            value = box.pop()
            if isinstance(value, _Raised):
                raise value.error
            return value
        except ToolError:
            raise
        except BaseException as exc:  # sys.exit(), KeyboardInterrupt...: never stop the host
            if is_cancellation(exc):
                raise
            raise ToolExecutionError(f"{type(exc).__name__}: {_message(exc)}") from exc

    async def answer(
        self,
        arguments: Mapping[str, Any] | str | None,
        *,
        context: ToolContext | None = None,
        timeout: float | None = None,
    ) -> ToolAnswer:
        """`call` within `timeout` seconds, its `ToolError` returned rather than raised."""
        try:
            with anyio.fail_after(timeout):
                return ToolAnswer(await self.call(arguments, context=context))
        except TimeoutError:
            return ToolAnswer(error=timeout_error(self.name, timeout))
        except ToolError as exc:
            return ToolAnswer(error=exc)

    def __str__(self) -> str:
        return f"Tool: {self.name} ({self.description})"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def tool_document(tool: BaseTool) -> str:
    """The text a tool is found by: its name (twice, it is the strongest signal), words, params."""
    name = tool.name.replace("_", " ").replace("-", " ")
    params = " ".join(tool.parameters_schema.get("properties", {}))
    return f"{name}. {name}. {tool.description} {params.replace('_', ' ')}"
