"""MetaManager: the main agent's view (one tool per category) and routing of calls."""

import json
import re

import anyio
import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import CategoryNotFoundError, ConfigError, ToolArgumentsError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.mcp.connection import McpToolSource
from tests.servers import changing

pytestmark = pytest.mark.anyio

PARAMETERS = {
    "type": "object",
    "properties": {
        "objective": {"type": "string", "description": "The goal, stated clearly."},
        "exact_input": {"type": "string", "description": "The complete, exact input to work on."},
    },
    "required": ["objective", "exact_input"],
}


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


def echo_model() -> ScriptedModel:
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            text = request.messages[1].content.split("Exact input: ", 1)[1]
            return AssistantTurn(tool_calls=[ToolCall(name="shout", arguments={"text": text})])
        return AssistantTurn(text=request.messages[-2].content)

    return ScriptedModel.from_function(answer)


def router() -> MetaManager:
    model = echo_model()
    return MetaManager(
        [
            CategoryManager("Programming & Tech Support", "Run code.", [shout], model),
            CategoryManager("Text", "Transform text.", [shout], model),
        ]
    )


def test_openai_tools_offer_one_function_per_category_with_exactly_two_string_arguments() -> None:
    tools = router().openai_tools()
    assert tools == [
        {
            "type": "function",
            "function": {
                "name": "programming_tech_support",
                "description": "Run code. It picks and runs the right tools itself.",
                "parameters": PARAMETERS,
            },
        },
        {
            "type": "function",
            "function": {
                "name": "text",
                "description": "Transform text. It picks and runs the right tools itself.",
                "parameters": PARAMETERS,
            },
        },
    ]
    fixed_text = len(json.dumps(tools[0])) - len("Run code.") - len("programming_tech_support")
    assert fixed_text <= 400


def test_list_tools_gives_the_same_schemas_in_mcp_shape() -> None:
    meta = router()
    assert [(t.name, t.input_schema) for t in meta.list_tools()] == [
        ("programming_tech_support", PARAMETERS),
        ("text", PARAMETERS),
    ]


async def test_call_accepts_the_slug_or_the_display_name_and_runs_calls_concurrently() -> None:
    meta = router()
    results = {}

    async def call(name: str, text: str) -> None:
        results[text] = await meta.call_tool(name, {"objective": "shout", "exact_input": text})

    async with anyio.create_task_group() as group:
        group.start_soon(call, "programming_tech_support", "one")
        group.start_soon(call, "Programming & Tech Support", "two")
        group.start_soon(call, "text", "three")
    assert {k: (r.category, r.status, r.executions[0].result) for k, r in results.items()} == {
        "one": ("Programming & Tech Support", "success", "ONE"),
        "two": ("Programming & Tech Support", "success", "TWO"),
        "three": ("Text", "success", "THREE"),
    }


async def test_unknown_category_and_missing_arguments_are_clear_errors() -> None:
    meta = router()
    with pytest.raises(CategoryNotFoundError) as caught:
        await meta.call_tool("maps", {"objective": "x", "exact_input": "y"})
    assert str(caught.value) == (
        "unknown category 'maps'; the categories are: "
        "'programming_tech_support' (Programming & Tech Support), 'text' (Text)"
    )
    with pytest.raises(ToolArgumentsError) as bad:
        await meta.call_tool("text", {"objective": 3, "input": "y"})
    assert bad.value.problems == [
        "'objective' is required and must be a string",
        "'exact_input' is required and must be a string",
        "'input' is not a parameter (allowed: objective, exact_input)",
    ]


def test_two_categories_with_the_same_function_name_are_refused() -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigError, match="have the same function name 'text'"):
        MetaManager(
            [
                CategoryManager("Text", "a", [shout], model),
                CategoryManager("text!", "b", [shout], model),
            ]
        )
    with pytest.raises(ConfigError, match="'Any category' has the function name 'any_category'"):
        MetaManager([CategoryManager("Any category", "a", [shout], model)])


@pytest.mark.parametrize(
    ("names", "slugs"),
    [
        (["Café", "für Kinder"], ["cafe", "fur_kinder"]),
        (["Погода", "Финансы", "天气 2"], None),  # other scripts: a hash keeps them apart
    ],
)
def test_category_names_in_any_script_become_distinct_function_names(
    names: list[str], slugs: list[str] | None
) -> None:
    model = ScriptedModel([])
    meta = MetaManager([CategoryManager(n, "a", [shout], model) for n in names])
    found = [t.name for t in meta.tool_definitions()]
    assert all(re.fullmatch(r"[a-z0-9_]{1,64}", s) for s in found)
    assert len(set(found)) == len(names)
    assert found == (slugs or found)
    assert meta.get_category(found[-1]).name == names[-1]


async def test_a_server_listing_new_tools_rebuilds_only_the_categories_whose_tools_changed() -> (
    None
):
    source = McpToolSource("changing", changing.build(), mode="legacy")  # type: ignore[arg-type]

    def learn_then_answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            call = ToolCall(name="learn", arguments={"name": "greet"})
            return AssistantTurn(tool_calls=[call])
        return AssistantTurn(text="learned")

    cfg = MetaToolsConfig.from_data(
        {
            "Loud": {"description": "Shouting.", "tools": ["shout"], "abstain_below": 0.1},
            "All": {"description": "Everything.", "tools": ["*"]},
        },
        source="test.json",
    )
    model = ScriptedModel.from_function(learn_then_answer)
    async with MetaManager.from_config(cfg, tools=[shout], model=model, sources=[source]) as meta:
        loud, everything = meta.get_category("loud"), meta.get_category("all")
        loud_tools, loud_shortlist, all_tools = loud.tools, loud.shortlist, everything.tools
        assert loud.redactor is everything.redactor is meta.redactor  # compiled once per build
        changed = anyio.Event()
        source.subscribe(lambda _: changed.set())
        result = await meta.call_tool("all", {"objective": "Learn greet", "exact_input": ""})
        with anyio.fail_after(10):
            await changed.wait()
        assert result.status == "success"
        assert "greet" not in all_tools
        assert [t.name for t in everything.tools.list_tools()] == [
            *(t.name for t in all_tools.list_tools()),
            "greet",
        ]
        assert everything.tools is not all_tools
        assert loud_shortlist is not None
        assert loud.tools is loud_tools and loud.shortlist is loud_shortlist
