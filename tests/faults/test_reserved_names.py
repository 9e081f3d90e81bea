"""Tools may not take the names of the category loop's control calls (`decline`, `request_input`)."""

from __future__ import annotations

import pytest
from mcp.server.mcpserver import MCPServer

from meta_tools import FunctionTool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp.connection import McpToolSource

pytestmark = pytest.mark.anyio


def named(name: str) -> FunctionTool:
    def run(text: str) -> str:
        return f"{name} ran: {text}"

    return FunctionTool(name, run, description=f"A tool called {name}.")


@pytest.mark.parametrize("name", ["decline", "request_input"])
def test_a_python_tool_with_a_control_name_is_a_config_error_naming_the_field(name: str) -> None:
    config = MetaToolsConfig.from_data(
        {"Work": {"description": "Work.", "tools": ["echo", name]}}, source="c.json"
    )
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(config, tools=[named("echo"), named(name)], model=ScriptedModel([]))
    assert caught.value.source == "c.json"
    assert caught.value.problems == [
        f"""$."Work".tools[1]: the tool name {name!r} is reserved for the category's control"""
        " calls (decline, request_input); rename the tool"
    ]


def test_a_category_built_in_code_refuses_a_tool_with_a_control_name() -> None:
    with pytest.raises(ConfigError) as caught:
        CategoryManager("Work", "Work.", [named("decline")], ScriptedModel([]))
    assert caught.value.problems == [
        "the tool name 'decline' is reserved for a control call; rename it"
    ]


async def test_mcp_tools_with_control_names_are_renamed_reported_and_really_called() -> None:
    server = MCPServer("controls")

    @server.tool()
    def decline(text: str) -> str:
        """A server tool that happens to be called decline."""
        return f"server decline ran: {text}"

    @server.tool()
    def request_input(text: str) -> str:
        """A server tool that happens to be called request_input."""
        return f"server request_input ran: {text}"

    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="mcp_decline", arguments={"text": "hi"})]),
            AssistantTurn(text="done"),
        ]
    )
    config = MetaToolsConfig.from_data(
        {"Work": {"description": "Work.", "tools": ["mcp_decline", "mcp_request_input"]}}
    )
    source = McpToolSource("controls", server)
    async with MetaManager.from_config(config, model=model, sources=[source]) as meta:
        result = await meta.call_tool("work", {"objective": "decline it", "exact_input": "hi"})
        warnings = list(meta.warnings)
    offered = [t.name for t in model.requests[0].tools]
    assert offered == ["mcp_decline", "mcp_request_input", "request_input", "decline"]
    assert result.status == "success"
    assert [(e.tool, e.result) for e in result.executions] == [
        ("mcp_decline", '{"result": "server decline ran: hi"}')
    ]
    assert warnings == [
        "tool 'decline' of MCP server 'controls' is offered as 'mcp_decline': its name is"
        " reserved for the category's control calls",
        "tool 'request_input' of MCP server 'controls' is offered as 'mcp_request_input': its"
        " name is reserved for the category's control calls",
    ]
