"""`FunctionTool` and the `@tool` decorator: a Python function becomes a tool."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from ..exceptions import ToolDefinitionError
from .base import BaseTool, ToolContext, ToolParameter
from .schema import (
    args_model_from_signature,
    check_tool_name,
    humanize,
    parse_docstring,
    schema_from_model,
    type_word,
)

__all__ = ["FunctionTool", "tool"]

F = TypeVar("F", bound=Callable[..., Any])
ArgsSpec = Mapping[str, ToolParameter | Mapping[str, Any]]


def _is_injected(param: inspect.Parameter, annotation: Any) -> bool:
    if param.name == "tool_call_id":
        return True
    return annotation is ToolContext or ToolContext in getattr(annotation, "__args__", ())


class FunctionTool(BaseTool):
    """A tool backed by a Python function (sync or async).

    Args:
        name: the tool name the LLM sees.
        func: the function; its signature, type hints and docstring give the schema.
        description: overrides the docstring.
        args: overrides parameter definitions (a ToolParameter or a dict with
            `type`, `description`, `required` per name).
        args_schema: a pydantic model that defines and validates the arguments.
    """

    def __init__(
        self,
        name: str,
        func: Callable[..., Any],
        description: str | None = None,
        args: ArgsSpec | None = None,
        args_schema: type[BaseModel] | None = None,
    ) -> None:
        self._name = check_tool_name(name)
        self._func = func
        doc_description, _ = parse_docstring(func.__doc__)
        self._description = description or doc_description or humanize(name)
        model, self._injected = args_model_from_signature(func, name, skip=_is_injected)
        self._explicit_args = self._normalize_args(args) if args is not None else None
        self._model = args_schema if args_schema is not None else model
        self._is_async = inspect.iscoroutinefunction(func)

    @staticmethod
    def _normalize_args(args: ArgsSpec) -> dict[str, ToolParameter]:
        out: dict[str, ToolParameter] = {}
        for key, spec in args.items():
            if isinstance(spec, ToolParameter):
                out[key] = spec
            elif isinstance(spec, Mapping):
                fields = {"name": key, "description": humanize(key), **spec}
                out[key] = ToolParameter.model_validate(fields)
            else:
                raise ToolDefinitionError(f"args[{key!r}] must be a ToolParameter or a dict")
        return out

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def func(self) -> Callable[..., Any]:
        return self._func

    @property
    def is_async(self) -> bool:
        return self._is_async

    @cached_property
    def args(self) -> dict[str, ToolParameter]:
        if self._explicit_args is not None:
            return self._explicit_args
        schema = self.parameters_schema
        required = set(schema["required"])
        return {
            key: ToolParameter(
                name=key,
                type=type_word(prop),
                description=prop.get("description", humanize(key)),
                required=key in required,
                json_schema=prop,
            )
            for key, prop in schema["properties"].items()
        }

    @cached_property
    def args_model(self) -> type[BaseModel]:
        if self._explicit_args is not None:
            return super().args_model
        return self._model

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        if self._explicit_args is not None:
            return super().parameters_schema
        return schema_from_model(self._model)

    def injected_arguments(self, context: ToolContext) -> dict[str, Any]:
        return {
            key: context.tool_call_id if key == "tool_call_id" else context
            for key in self._injected
        }

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        return self._func(*args, **kwargs)

    async def async_execute(self, *args: Any, **kwargs: Any) -> Any:
        return await self._func(*args, **kwargs)


@overload
def tool(func: F, /) -> F: ...
@overload
def tool(
    name: str | None = None,
    /,
    *,
    description: str | None = None,
    args: ArgsSpec | None = None,
    args_schema: type[BaseModel] | None = None,
) -> Callable[[F], F]: ...
def tool(
    name_or_func: Any = None,
    /,
    *,
    description: str | None = None,
    args: ArgsSpec | None = None,
    args_schema: type[BaseModel] | None = None,
) -> Any:
    """Turn a function into a tool; the function stays callable as before.

    Use as `@tool`, `@tool("name", description=...)`, `@tool(args={...})` or
    `@tool(args_schema=Model)`. The FunctionTool is kept as `func._tool`.
    """

    def decorate(func: F, name: str | None = None) -> F:
        func._tool = FunctionTool(  # type: ignore[attr-defined]
            name or func.__name__, func, description, args, args_schema
        )
        return func

    if callable(name_or_func):
        return decorate(name_or_func)
    return lambda func: decorate(func, name_or_func)
