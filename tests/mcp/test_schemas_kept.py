"""A server's input schema reaches the category model with its meaning intact, and arguments
are checked against the server's own schema (issue 58 item 5).

The first schemas are copied from LiveMCPBench's catalog of real MCP servers (Bing CN
search, and AntV's MCP Server Chart); the rest use JSON Schema 2020-12 keywords.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import pytest
from mcp.server import Server, ServerRequestContext

from meta_tools.exceptions import ToolArgumentsError
from meta_tools.tools.mcp.connection import McpToolSource
from meta_tools.tools.mcp.offered_schema import offered_schema
from meta_tools.tools.mcp.tool import McpServerTool

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])
DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"

BING_SEARCH = {  # Bing_CN_MCP::bing_search
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "搜索关键词"},
        "num_results": {"type": "number", "default": 5, "description": "返回的结果数量，默认为5"},
    },
    "required": ["query"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}

FISHBONE = {  # MCP Server Chart::generate_fishbone_diagram (a $ref into its own properties)
    "type": "object",
    "properties": {
        "data": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "children": {
                                "type": "array",
                                "items": {"$ref": "#/properties/data/properties/children/items"},
                            },
                        },
                        "required": ["name"],
                    },
                },
            },
            "required": ["name"],
            "description": "Data for fishbone diagram chart.",
        },
        "theme": {"type": "string", "enum": ["default", "academy"], "default": "default"},
    },
    "required": ["data"],
    "$schema": "http://json-schema.org/draft-07/schema#",
}

HISTOGRAM = {  # MCP Server Chart::generate_histogram_chart, shortened (anyOf with not inside)
    "type": "object",
    "properties": {
        "data": {"type": "array", "items": {"type": "number"}, "minItems": 1},
        "binNumber": {
            "anyOf": [{"type": "number"}, {"not": {}}, {"type": "null"}],
            "default": None,
            "description": "Number of intervals to define the number of intervals in a histogram.",
        },
    },
    "required": ["data"],
    "$schema": "http://json-schema.org/draft-07/schema#",
}

# 2020-12: a top-level allOf of objects, $defs with $ref, prefixItems, dependentRequired
MOVE = {
    "$schema": DRAFT_2020_12,
    "type": "object",  # MCP requires it at the top
    "$defs": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}]}},
    "allOf": [
        {
            "type": "object",
            "properties": {"from": {"$ref": "#/$defs/point"}},
            "required": ["from"],
        },
        {
            "type": "object",
            "properties": {"to": {"$ref": "#/$defs/point"}, "speed": {"type": "number"}},
            "required": ["to"],
            "dependentRequired": {"speed": ["to"]},
        },
    ],
}

# a top-level oneOf of argument sets: by id, or by owner and name
FIND_REPO = {
    "$schema": DRAFT_2020_12,
    "type": "object",
    "properties": {"verbose": {"type": "boolean"}},
    "oneOf": [
        {"properties": {"id": {"type": "integer"}}, "required": ["id"]},
        {
            "properties": {"owner": {"type": "string"}, "name": {"type": "string"}},
            "required": ["owner", "name"],
        },
    ],
}

# a top-level anyOf about one property: it moves under that property
LIMIT = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
    "anyOf": [
        {"properties": {"limit": {"type": "integer", "minimum": 1}}},
        {"properties": {"limit": {"const": "all"}}},
    ],
}

# if/then/else at the top: a file needs a path, anything else a url
EXPORT = {
    "$schema": DRAFT_2020_12,
    "type": "object",
    "properties": {"target": {"enum": ["file", "web"]}},
    "required": ["target"],
    "if": {"properties": {"target": {"const": "file"}}},
    "then": {"properties": {"path": {"type": "string"}}, "required": ["path"]},
    "else": {"properties": {"url": {"type": "string", "format": "uri"}}, "required": ["url"]},
}


def served(schemas: dict[str, dict[str, Any]]) -> Server[Any]:
    """A real MCP server whose tools have exactly these input schemas; a call echoes its arguments."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams | None
    ) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(name=name, description=f"The {name} tool.", input_schema=schema)
                for name, schema in schemas.items()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> mcp_types.CallToolResult:
        text = json.dumps(params.arguments, sort_keys=True)
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=text)])

    return Server("schemas", on_list_tools=list_tools, on_call_tool=call_tool)


def listed(source: McpToolSource, name: str) -> McpServerTool:
    tool = source.get_tool(name)
    assert isinstance(tool, McpServerTool)
    return tool


async def refused(tool: McpServerTool, arguments: dict[str, Any]) -> list[str]:
    with pytest.raises(ToolArgumentsError) as caught:
        await tool.call(arguments)
    return caught.value.problems


async def test_real_catalog_schemas_are_offered_as_the_server_wrote_them() -> None:
    for schema in (BING_SEARCH, FISHBONE, HISTOGRAM):
        offered = offered_schema(schema)
        assert offered.parameters == schema  # $schema, $ref, nested anyOf/not all kept
        assert offered.notes == ()


async def test_a_top_level_all_of_of_objects_is_merged_into_one_object() -> None:
    offered = offered_schema(MOVE)
    assert offered.parameters == {
        "type": "object",
        "$schema": DRAFT_2020_12,
        "$defs": MOVE["$defs"],
        "dependentRequired": {"speed": ["to"]},
        "properties": {
            "from": {"$ref": "#/$defs/point"},
            "to": {"$ref": "#/$defs/point"},
            "speed": {"type": "number"},
        },
        "required": ["from", "to"],
    }
    assert offered.notes == ()


async def test_a_top_level_one_of_offers_every_argument_and_says_which_go_together() -> None:
    offered = offered_schema(FIND_REPO)
    assert offered.parameters["properties"] == {
        "verbose": {"type": "boolean"},
        "id": {"type": "integer"},
        "owner": {"type": "string"},
        "name": {"type": "string"},
    }
    assert offered.parameters["required"] == []
    assert "oneOf" not in offered.parameters
    assert offered.notes == (
        "The arguments must match exactly one of these: (1) `id`; (2) `owner` and `name`.",
    )


async def test_a_top_level_any_of_about_one_property_moves_under_that_property() -> None:
    offered = offered_schema(LIMIT)
    assert offered.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"const": "all"}]},
        },
        "required": ["query"],
    }
    assert offered.notes == ()


async def test_if_then_else_at_the_top_is_said_in_words_with_its_properties_offered() -> None:
    offered = offered_schema(EXPORT)
    assert set(offered.parameters) == {"type", "$schema", "properties", "required"}
    assert list(offered.parameters["properties"]) == ["target", "path", "url"]
    assert offered.parameters["required"] == ["target"]
    assert offered.notes == (
        'If `target` = "file", `path` is required; otherwise, `url` is required.',
    )


@MODES
async def test_a_server_tool_gets_the_offered_schema_and_the_notes_in_its_description(
    mode: str,
) -> None:
    schemas = {"find_repo": FIND_REPO, "move": MOVE, "bing_search": BING_SEARCH}
    async with McpToolSource("schemas", served(schemas), mode=mode) as source:  # type: ignore[arg-type]
        await source.connect()
        find_repo = listed(source, "find_repo").openai_schema()["function"]
        move = listed(source, "move").openai_schema()["function"]
        bing = listed(source, "bing_search").openai_schema()["function"]
    assert find_repo["description"] == (
        "The find_repo tool. The arguments must match exactly one of these: (1) `id`;"
        " (2) `owner` and `name`."
    )
    assert find_repo["parameters"] == offered_schema(FIND_REPO).parameters
    assert (move["description"], move["parameters"]["required"]) == (
        "The move tool.",
        ["from", "to"],
    )
    assert bing["parameters"] == BING_SEARCH


@MODES
async def test_arguments_are_checked_against_the_servers_whole_schema_before_the_call(
    mode: str,
) -> None:
    schemas = {"find_repo": FIND_REPO, "export": EXPORT, "move": MOVE, "fishbone": FISHBONE}
    async with McpToolSource("schemas", served(schemas), mode=mode) as source:  # type: ignore[arg-type]
        await source.connect()
        find_repo, export = listed(source, "find_repo"), listed(source, "export")
        move, fishbone = listed(source, "move"), listed(source, "fishbone")
        both = await refused(find_repo, {"id": 7, "owner": "a", "name": "b"})
        neither = await refused(find_repo, {"verbose": True})
        no_path = await refused(export, {"target": "file", "url": "https://x.example"})
        short_point = await refused(move, {"from": ["a", 2], "to": [3, 4]})
        deep = await refused(fishbone, {"data": {"name": "m", "children": [{"children": [{}]}]}})
        # arguments that pass are sent as given (the server echoes them)
        ok = await export.call({"target": "web", "url": "https://x.example"})
        by_id = await find_repo.call({"id": "7"})  # coerced to an integer first
    assert len(both) == 1
    assert both[0].startswith(
        "'arguments': {'id': 7, 'owner': 'a', 'name': 'b'} is valid under each of"
    )
    assert neither[0].startswith("'arguments': {'verbose': True} is not valid under any of")
    assert no_path == ["'arguments': 'path' is a required property"]
    assert short_point == ["'from.0': 'a' is not of type 'number'"]
    assert deep == [
        "'data.children.0': 'name' is a required property",
        "'data.children.0.children.0': 'name' is a required property",
    ]
    assert json.loads(ok) == {"target": "web", "url": "https://x.example"}
    assert json.loads(by_id) == {"id": 7}
