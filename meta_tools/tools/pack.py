"""`ToolPack`: a named set of tools that finds, validates and runs them, one or many at once."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from ..exceptions import ToolDefinitionError, ToolError, ToolExecutionError, ToolNotFoundError
from ..llm.types import ToolCall
from ..support.lifecycle import is_cancellation
from ..support.suggest import did_you_mean_tool, tool_text
from .base import BaseTool, PromptType, ToolAnswer, ToolContext
from .schema import check_tool_name

__all__ = ["ToolOutcome", "ToolPack", "as_tool"]


def as_tool(item: BaseTool | Callable[..., Any]) -> BaseTool:
    """Accept a BaseTool or a function decorated with `@tool`."""
    if isinstance(item, BaseTool):
        return item
    wrapped = getattr(item, "_tool", None)
    if isinstance(wrapped, BaseTool):
        return wrapped
    raise ToolDefinitionError(
        f"{item!r} is not a tool: pass a BaseTool, or decorate the function with @tool"
    )


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one call in a batch: a value, or a ToolError with its kind.

    `cached` is None for a tool without a cache, else whether the cache answered.
    """

    call: ToolCall
    value: Any = None
    error: ToolError | None = None
    duration_s: float = 0.0
    cached: bool | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class ToolPack:
    """A named set of tools with unique names.

    Raises:
        ToolDefinitionError: two tools share a name, or a name is invalid.
    """

    def __init__(self, tools: Iterable[BaseTool | Callable[..., Any]], name: str = "tools") -> None:
        self.name = name
        self._tools: dict[str, BaseTool] = {}
        for item in tools:
            found = as_tool(item)
            check_tool_name(found.name)
            if found.name in self._tools:
                raise ToolDefinitionError(
                    f"tool name {found.name!r} is used twice in {name!r}; rename one of them"
                )
            self._tools[found.name] = found

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def list_tools(self) -> list[BaseTool]:
        return list(self._tools.values())

    def get_tool(self, name: str) -> BaseTool:
        """Find a tool by name; the error suggests close names."""
        try:
            return self._tools[name]
        except KeyError:
            documents = {
                known: tool_text(tool.description, tool.parameters_schema)
                for known, tool in self._tools.items()
            }
            hint = did_you_mean_tool(name, documents)
            hint = f" D{hint[1:]}" if hint else ""  # a sentence of its own
            known = ", ".join(self._tools) or "none"
            raise ToolNotFoundError(
                f"unknown tool {name!r}.{hint} Available tools: {known}"
            ) from None

    def openai_tools(self) -> list[dict[str, Any]]:
        return [t.openai_schema() for t in self._tools.values()]

    async def get_prompt(self, prompt_type: PromptType = "default") -> str:
        lines = [await t.get_prompt(prompt_type) for t in self._tools.values()]
        return "You have access to the following APIs:\n" + "\n".join(lines)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        timeout: float | None = None,
        context: ToolContext | None = None,
    ) -> Any:
        """Run one tool by name.

        Raises:
            ToolError: unknown tool, invalid arguments, the tool raised, or the timeout passed.
        """
        answer = await self.get_tool(name).answer(arguments, context=context, timeout=timeout)
        return answer.result()

    async def call_tools(
        self,
        calls: Sequence[ToolCall],
        *,
        timeout: float | None = None,
        category: str | None = None,
        run_id: str | None = None,
    ) -> list[ToolOutcome]:
        """Run a batch concurrently; one failure never stops the others; order is kept."""
        outcomes: dict[int, ToolOutcome] = {}

        async def run(index: int, call: ToolCall) -> None:
            context = ToolContext(tool_call_id=call.id, category=category, run_id=run_id)
            started = time.perf_counter()
            try:
                found = self.get_tool(call.name)
            except ToolError as exc:
                answer = ToolAnswer(error=exc)
            else:
                try:
                    answer = await found.answer(call.arguments, context=context, timeout=timeout)
                except BaseException as exc:  # a tool overriding `call` (or a wrapper) let it out
                    if is_cancellation(exc):
                        raise
                    answer = ToolAnswer(error=ToolExecutionError(f"{type(exc).__name__}: {exc}"))
            took = time.perf_counter() - started
            outcomes[index] = ToolOutcome(call, answer.value, answer.error, took, answer.cached)

        if len(calls) == 1:
            await run(0, calls[0])
        else:
            async with anyio.create_task_group() as group:
                for index, call in enumerate(calls):
                    group.start_soon(run, index, call)
        return [outcomes[index] for index in range(len(calls))]
