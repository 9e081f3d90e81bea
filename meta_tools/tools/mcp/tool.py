"""The level-1 face of MCP tools: `McpServerTool` (a server's tool) and `PendingTool` (not yet listed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Protocol

import mcp_types

from ...exceptions import ToolArgumentsError, ToolUnavailableError
from ...llm.types import RESERVED_TOOL_NAMES
from ...support.json_text import loads
from ...support.text import valid_utf8, valid_utf8_value
from ..base import BaseTool, ToolContext, ToolParameter
from ..schema import tool_name_slug, type_word
from .offered_schema import offered_schema
from .schema_check import SchemaCheck

__all__ = [
    "McpServerTool",
    "PendingTool",
    "ToolSource",
    "reserved_name_of",
    "tool_name_for",
    "unreserved",
]


class ToolSource(Protocol):
    """What a tool needs from its MCP source."""

    name: str

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any: ...

    async def connect(self) -> None: ...

    def get_tool(self, name: str) -> McpServerTool | None: ...


def tool_name_for(remote: str, prefix: str | None) -> str:
    """The router name of a server's tool: `prefix_name`, made a valid function name.

    A reserved name (a control call of the category loop) becomes `mcp_name`.
    """
    return unreserved(tool_name_slug(f"{prefix}_{remote}" if prefix else remote))


#: What a server's tool named like a control call of the category loop is offered under.
_RESERVED_PREFIX = "mcp_"


def unreserved(name: str) -> str:
    """`name`, or `mcp_name` when it is reserved for a control call (`reserved_name_of` undoes it)."""
    return f"{_RESERVED_PREFIX}{name}" if name in RESERVED_TOOL_NAMES else name


def reserved_name_of(name: str) -> str | None:
    """The reserved name that `unreserved` turned into `name`; None when it renamed nothing."""
    original = name.removeprefix(_RESERVED_PREFIX)
    return original if original != name and original in RESERVED_TOOL_NAMES else None


def _properties(schema: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The schema's properties; a server may send anything, so what is not a schema is `{}`."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {str(k): dict(v) if isinstance(v, Mapping) else {} for k, v in properties.items()}


def _required(schema: Mapping[str, Any]) -> list[str]:
    required = schema.get("required")
    return [r for r in required if isinstance(r, str)] if isinstance(required, list) else []


def _parameters(schema: Mapping[str, Any]) -> dict[str, ToolParameter]:
    required = set(_required(schema))
    parameters: dict[str, ToolParameter] = {}
    for key, prop in _properties(schema).items():
        parameters[key] = ToolParameter(
            name=key,
            type=type_word(prop),
            description=str(prop.get("description") or prop.get("title") or ""),
            required=key in required,
            json_schema=prop,
        )
    return parameters


class McpServerTool(BaseTool):
    """One tool of an MCP server; a call goes through the server's persistent session.

    Its argument model is built from the parameter table, so only the arguments
    the LLM gave are sent and the server's own defaults apply to the rest. The LLM
    gets the server's schema in a form function calling accepts (`offered_schema`,
    what only words can say added to the description); the arguments are checked
    against the server's own schema too (`SchemaCheck`).
    """

    def __init__(self, source: ToolSource, remote: mcp_types.Tool, name: str) -> None:
        self.source = source
        # A server's metadata goes on to the LLM and to clients: valid UTF-8 only.
        self.remote = remote.model_copy(
            update={
                "description": remote.description and valid_utf8(remote.description),
                "title": remote.title and valid_utf8(remote.title),
                "input_schema": valid_utf8_value(remote.input_schema),
            }
        )
        remote = self.remote
        self._name = name
        self._offered = offered_schema(remote.input_schema)
        self._args = _parameters(self._offered.parameters)
        self._check = SchemaCheck(remote.input_schema)

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        described = remote_description(self.remote, self.source.name)
        return " ".join([described, *self._offered.notes])

    @property
    def args(self) -> dict[str, ToolParameter]:
        return self._args

    @property
    def is_async(self) -> bool:
        return True

    @cached_property
    def parameters_schema(self) -> dict[str, Any]:
        return self._offered.parameters

    def validate_arguments(self, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Coerce and check the arguments, then check them against the server's whole schema."""
        values = super().validate_arguments(arguments)
        problems = self._check.problems(values)
        if problems:
            raise ToolArgumentsError(self.name, problems)
        return values

    async def async_execute(self, **kwargs: Any) -> Any:
        return await self.source.call_tool(self.remote.name, kwargs)

    def __repr__(self) -> str:
        return f"<McpServerTool {self.name!r} of {self.source.name!r}>"


def remote_description(remote: mcp_types.Tool, server: str) -> str:
    return (
        remote.description or remote.title or f"Tool {remote.name!r} of MCP server {server!r}."
    ).strip()


class PendingTool(BaseTool):
    """Stands for a listed tool whose MCP server has not been listed yet (down, or first use).

    A call first tries to connect the servers that may provide it; if one now
    does, the call goes to the real tool (which validates the arguments).
    """

    def __init__(self, name: str, sources: Sequence[ToolSource], reason: str = "") -> None:
        self._name = name
        self.sources = list(sources)
        self.reason = reason

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        servers = ", ".join(repr(s.name) for s in self.sources)
        why = f": {self.reason}" if self.reason else ""
        return (
            f"Unavailable right now: MCP server {servers} that provides this tool is not"
            f" connected{why}. Calling it retries the connection."
        )

    @property
    def args(self) -> dict[str, ToolParameter]:
        return {}

    @property
    def is_async(self) -> bool:
        return True

    def validate_arguments(self, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """Anything goes: the real tool validates once its server is connected."""
        if isinstance(arguments, str):
            try:
                arguments = loads(arguments) if arguments.strip() else {}
            except ValueError:
                return {"arguments": arguments}
        return dict(arguments) if isinstance(arguments, Mapping) else {}

    async def call(
        self, arguments: Mapping[str, Any] | str | None, *, context: ToolContext | None = None
    ) -> Any:
        reasons: list[str] = []
        for source in self.sources:
            try:
                await source.connect()
            except ToolUnavailableError as exc:
                reasons.append(str(exc))
                continue
            found = source.get_tool(self.name)
            if found is not None:
                return await found.call(arguments, context=context)
            reasons.append(f"MCP server {source.name!r} does not provide a tool {self.name!r}")
        raise ToolUnavailableError(f"tool {self.name!r} is unavailable: " + "; ".join(reasons))

    def __repr__(self) -> str:
        return f"<PendingTool {self.name!r}>"
