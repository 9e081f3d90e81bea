"""The conformance client script: what it sends, per scenario, to a real MCP server in memory."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp.server import Server, ServerRequestContext

from meta_tools.tools.mcp import McpToolSource
from tests.conformance.client import example_arguments, exercise

pytestmark = pytest.mark.anyio

SCHEMA_2020_12: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "$defs": {"address": {"type": "object", "properties": {"city": {"type": "string"}}}},
    "additionalProperties": False,
}
TOOLS = [
    mcp_types.Tool(
        name="add_numbers",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    ),
    mcp_types.Tool(
        name="greet",
        input_schema={
            "type": "object",
            "properties": {
                "who": {"type": "string", "default": "world"},
                "loud": {"type": "boolean"},
            },
            "required": ["who", "loud"],
        },
    ),
    mcp_types.Tool(name="json_schema_2020_12_tool", input_schema=SCHEMA_2020_12),
    mcp_types.Tool(
        name="json_schema_echo",
        input_schema={
            "type": "object",
            "properties": {"schema": {"type": "object"}},
            "required": ["schema"],
        },
    ),
]


def scenario_server(calls: list[tuple[str, dict[str, Any]]]) -> Server[Any]:
    """A server like the suite's scenario servers; every call it gets lands in `calls`."""

    async def list_tools(
        ctx: ServerRequestContext, params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=TOOLS)

    async def call_tool(
        ctx: ServerRequestContext, params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        calls.append((params.name, dict(params.arguments or {})))
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="ok")])

    return Server("scenario", on_list_tools=list_tools, on_call_tool=call_tool)


async def calls_of(scenario: str) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    async with McpToolSource("conformance", scenario_server(calls)) as source:
        await source.connect()
        await exercise(source, scenario, problems)
    return calls, problems


def test_required_arguments_get_their_default_or_a_value_of_their_type() -> None:
    assert example_arguments(TOOLS[1].input_schema) == {"who": "world", "loud": True}
    assert example_arguments(
        {"properties": {"n": {"type": ["integer", "null"]}}, "required": ["n"]}
    ) == {"n": 1}


async def test_a_scenario_gets_each_listed_tool_called_as_a_category_calls_it() -> None:
    calls, problems = await calls_of("tools_call")
    assert problems == []
    assert calls[:2] == [
        ("add_numbers", {"a": 1, "b": 1}),
        ("greet", {"who": "world", "loud": True}),
    ]
    assert [name for name, _ in calls] == [tool.name for tool in TOOLS]


async def test_the_schema_scenario_echoes_the_schema_our_category_model_is_shown() -> None:
    calls, problems = await calls_of("json-schema-2020-12-preservation")
    assert problems == []
    [(name, arguments)] = calls
    assert name == "json_schema_echo"
    # What `McpServerTool.parameters_schema` offers the model; the suite compares it with
    # SCHEMA_2020_12, so a keyword lost on the way (item 58.5) shows there.
    assert arguments["schema"]["properties"] == SCHEMA_2020_12["properties"]
    assert arguments["schema"]["$defs"] == SCHEMA_2020_12["$defs"]


async def test_the_no_deref_scenario_only_lists() -> None:
    assert await calls_of("json-schema-ref-no-deref") == ([], [])
