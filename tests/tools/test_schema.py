"""Type hints and docstrings become correct JSON schema; calls are validated by the same model."""

import enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from meta_tools import FunctionTool, ToolContext, tool
from meta_tools.exceptions import ToolArgumentsError, ToolDefinitionError, ToolExecutionError

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    city: str = Field(description="City name")
    zip: str | None = None


def test_google_docstring_args_give_descriptions_and_defaults_make_parameters_optional() -> None:
    def search(query: str, limit: int = 10) -> list[str]:
        """Search the web.

        Longer explanation that stays in the description.

        Args:
            query: What to look for.
            limit: How many results to return,
                at most 50.

        Returns:
            The result titles.
        """
        return []

    made = FunctionTool("search", search)
    assert (
        made.description == "Search the web.\n\nLonger explanation that stays in the description."
    )
    assert made.parameters_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "default": 10,
                "description": "How many results to return, at most 50.",
            },
        },
        "required": ["query"],
    }


def test_optional_literal_enum_list_dict_and_nested_models_give_real_json_schema() -> None:
    def plan(
        mode: Literal["fast", "slow"],
        color: Color,
        tags: list[str],
        weights: dict[str, float],
        address: Address,
        note: str | None = None,
    ) -> str:
        """Plan something."""
        return ""

    props = FunctionTool("plan", plan).parameters_schema["properties"]
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "description": "Mode"}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"], "description": "Color"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}, "description": "Tags"}
    assert props["weights"] == {
        "type": "object",
        "additionalProperties": {"type": "number"},
        "description": "Weights",
    }
    assert props["address"] == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "zip": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["city"],
        "description": "Address",
    }
    assert props["note"] == {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "default": None,
        "description": "Note",
    }


def test_every_tool_gives_openai_and_mcp_shapes() -> None:
    @tool
    def add(a: int, b: int = 1) -> int:
        """Add two integers."""
        return a + b

    made = add._tool  # type: ignore[attr-defined]
    parameters = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "A"},
            "b": {"type": "integer", "default": 1, "description": "B"},
        },
        "required": ["a"],
    }
    assert made.openai_schema() == {
        "type": "function",
        "function": {"name": "add", "description": "Add two integers.", "parameters": parameters},
    }
    mcp = made.mcp_tool()
    assert (mcp.name, mcp.description, mcp.input_schema) == ("add", "Add two integers.", parameters)
    assert mcp.model_dump(by_alias=True, exclude_none=True)["inputSchema"] == parameters


@pytest.mark.parametrize("name", ["has space", "dots.not.ok", "", "x" * 65, "Programming & Tech"])
def test_invalid_tool_names_are_refused_with_a_suggestion(name: str) -> None:
    with pytest.raises(ToolDefinitionError, match=r"\^\[A-Za-z0-9_-\]\{1,64\}\$"):
        FunctionTool(name, lambda: None)


async def test_safe_coercion_of_numbers_and_json_strings() -> None:
    def total(count: int, items: list[int], address: Address) -> str:
        """Total."""
        return f"{count}:{sum(items)}:{address.city}"

    made = FunctionTool("total", total)
    result = await made.call({"count": "10", "items": "[1, 2, 3]", "address": '{"city": "Oslo"}'})
    assert result == "10:6:Oslo"
    assert await made.call('{"count": 1, "items": [], "address": {"city": "Rome"}}') == "1:0:Rome"


async def test_invalid_arguments_list_every_bad_field_in_one_error() -> None:
    def total(count: int, items: list[int], mode: Literal["a", "b"]) -> int:
        """Total."""
        return 0

    made = FunctionTool("total", total)
    with pytest.raises(ToolArgumentsError) as caught:
        await made.call({"count": "ten", "mode": "c", "extra": 1})
    message = str(caught.value)
    assert message.startswith("invalid arguments for tool 'total': ")
    assert "'count': Input should be a valid integer" in message
    assert "'items' is required" in message
    assert "'mode': Input should be 'a' or 'b' (got 'c')" in message
    assert "'extra' is not a parameter (allowed: count, items, mode)" in message
    assert len(caught.value.problems) == 4


async def test_a_tool_without_parameters_ignores_the_arguments_it_is_given() -> None:
    """The 1.5B sent `{"id": "top100"}` to "Get Top 100 Movies"; told that `id` is not a
    parameter, it gave up. Nothing it passes there can change what the tool does."""
    seen: list[object] = []

    def top_movies(ctx: ToolContext) -> str:
        """The top 100 movies."""
        seen.append(ctx.tool_call_id)
        return "1. The Shawshank Redemption"

    made = FunctionTool("top_movies", top_movies)
    assert made.parameters_schema["properties"] == {}
    context = ToolContext(tool_call_id="call_1", category="movies")
    assert await made.call({"id": "top100"}, context=context) == "1. The Shawshank Redemption"
    # Nor can it forge what the router injects.
    await made.call({"tool_call_id": "forged"}, context=context)
    assert seen == ["call_1", "call_1"]
    with pytest.raises(ToolArgumentsError, match="arguments must be a JSON object"):
        await made.call("[1]")


async def test_malformed_json_arguments_are_a_readable_error() -> None:
    made = FunctionTool("noop", lambda: None)
    with pytest.raises(ToolArgumentsError, match="not valid JSON"):
        await made.call('{"a": ')


async def test_tool_call_id_and_context_are_injected_and_hidden_from_the_schema() -> None:
    seen: list[object] = []

    def traced(city: str, tool_call_id: str, ctx: ToolContext) -> str:
        """Look up a city."""
        seen.extend([tool_call_id, ctx.category])
        return city

    made = FunctionTool("traced", traced)
    assert list(made.parameters_schema["properties"]) == ["city"]
    assert made.parameters_schema["required"] == ["city"]
    context = ToolContext(tool_call_id="call_7", category="maps")
    assert await made.call({"city": "Paris"}, context=context) == "Paris"
    assert seen == ["call_7", "maps"]
    with pytest.raises(ToolArgumentsError, match="'tool_call_id' is not a parameter"):
        await made.call({"city": "Paris", "tool_call_id": "forged"}, context=context)


async def test_sync_and_async_functions_both_run_and_errors_keep_their_message() -> None:
    async def aecho(text: str) -> str:
        """Echo."""
        return text.upper()

    def boom() -> None:
        """Fail."""
        raise RuntimeError("disk on fire")

    assert FunctionTool("aecho", aecho).is_async
    assert await FunctionTool("aecho", aecho).call({"text": "hi"}) == "HI"
    with pytest.raises(ToolExecutionError, match="RuntimeError: disk on fire"):
        await FunctionTool("boom", boom).call({})


async def test_an_optional_parameter_the_llm_omits_keeps_the_tools_own_default() -> None:
    from typing import ClassVar

    from meta_tools import BaseTool, ToolParameter

    class Paged(BaseTool):
        name = "paged"
        description = "A DB-GPT style tool with a parameter table."
        args: ClassVar[dict[str, ToolParameter]] = {
            "query": ToolParameter(name="query", type="string", description="What to find"),
            "limit": ToolParameter(
                name="limit", type="integer", description="At most", required=False
            ),
        }

        def execute(self, query: str, limit: int = 10) -> list[object]:
            return [query, limit]

    @tool(args={"limit": {"type": "integer", "required": False}})
    def paged(limit: int = 10) -> int:
        return limit

    assert await Paged().call({"query": "x"}) == ["x", 10]
    assert await Paged().call({"query": "x", "limit": "3"}) == ["x", 3]
    assert await paged._tool.call({}) == 10  # type: ignore[attr-defined]
    assert await paged._tool.call({"limit": None}) is None  # type: ignore[attr-defined]


def test_an_invalid_tool_name_is_refused_with_a_valid_name_to_try() -> None:
    from meta_tools.tools.mcp.tool import tool_name_for

    def noop() -> None:
        """Nothing."""

    with pytest.raises(ToolDefinitionError) as refused:
        FunctionTool("Programming & Tech Support", noop)
    assert str(refused.value) == (
        "tool name 'Programming & Tech Support' is invalid: names must match"
        " ^[A-Za-z0-9_-]{1,64}$ (letters, digits, '_' and '-', at most 64);"
        " try 'Programming_Tech_Support'"
    )
    assert tool_name_for("read file", "fs") == "fs_read_file"
    assert tool_name_for("add", None) == "add"
    assert tool_name_for("é" * 3, None) == "tool"
    assert tool_name_for("x" * 70, "p") == "p_" + "x" * 62
