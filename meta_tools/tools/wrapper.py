"""`ToolWrapper`: a tool that is another tool in all but the one call method it wraps.

A wrapper (the result cache) changes how a tool is called and nothing else: its
name, schemas, prompt, validation, and any member a later `BaseTool` gains, are
the inner tool's. So the wrapper does not forward members by hand: every public
`BaseTool` member it does not define reads the inner tool's (a new member
included), and a member only the inner tool's class has is read from it too.
A subclass overrides `answer`; `call` goes through it.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any

from .base import BaseTool, ToolAnswer, ToolContext, ToolParameter

__all__ = ["ToolWrapper", "unwrap"]

#: `BaseTool`'s hooks for its own `call`: a wrapper's call goes through `answer`, never these.
_CALL_HOOKS = frozenset({"execute", "async_execute"})


class _Inner:
    """A member of the wrapper read from its inner tool."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, wrapper: ToolWrapper | None, owner: type | None = None) -> Any:
        if wrapper is None:
            return self
        return getattr(wrapper.inner, self.name)


class ToolWrapper(BaseTool):
    """`inner` in every member but its call: subclasses override `answer`.

    Args:
        inner: the tool to wrap.
    """

    def __init__(self, inner: BaseTool) -> None:
        self.inner = inner

    # The abstract members, written out so that type checkers see a concrete tool.
    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def args(self) -> dict[str, ToolParameter]:
        return self.inner.args

    @property
    def is_async(self) -> bool:
        return True

    async def call(
        self, arguments: Mapping[str, Any] | str | None, *, context: ToolContext | None = None
    ) -> Any:
        """`answer`'s value, or its error raised.

        Raises:
            ToolError: as the inner tool.
        """
        return (await self.answer(arguments, context=context)).result()

    async def answer(
        self,
        arguments: Mapping[str, Any] | str | None,
        *,
        context: ToolContext | None = None,
        timeout: float | None = None,
    ) -> ToolAnswer:
        """The one call method a wrapper changes; by default the inner tool's answer."""
        return await self.inner.answer(arguments, context=context, timeout=timeout)

    def __getattr__(self, name: str) -> Any:
        # Only for members `BaseTool` lacks (an MCP tool's `source`, ...); `inner` itself
        # is missing only while the wrapper is being built or unpickled.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.inner!r}>"


def _forward_the_rest() -> None:
    for member in vars(BaseTool):
        if member.startswith("_") or member in vars(ToolWrapper) or member in _CALL_HOOKS:
            continue
        setattr(ToolWrapper, member, _Inner(member))
    abc.update_abstractmethods(ToolWrapper)


_forward_the_rest()


def unwrap(tool: BaseTool) -> BaseTool:
    """The tool itself, under any wrappers (a result cache) around it."""
    while isinstance(tool, ToolWrapper):
        tool = tool.inner
    return tool
