"""Fuzzed inputs: configs, tool-call arguments and MCP tool schemas.

Properties:
- any JSON (random, or a valid config mutated) gives a config or a `ConfigError`
  whose problems each name a JSON path; nothing else is raised;
- any arguments an LLM could send give validated values or a `ToolArgumentsError`
  that reads as one printable line per problem;
- any input schema an MCP server could send (anything `mcp_types.Tool` accepts)
  becomes a tool whose schemas, prompt and validation never crash.
"""

from __future__ import annotations

import copy
import json
from typing import Annotated, Any, Literal

import anyio
import mcp_types
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from meta_tools import FunctionTool, tool
from meta_tools.config import SECTIONS, MetaToolsConfig
from meta_tools.exceptions import ConfigError, ToolArgumentsError
from meta_tools.tools.mcp.tool import McpServerTool
from meta_tools.tools.schema import args_model_from_parameters, validate_arguments

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)


# -- configs ----------------------------------------------------------------------------------

VALID: dict[str, Any] = {
    "Information Retrieval": {
        "description": "Search the web.",
        "tool_usage_notes": "Search first, then crawl.",
        "tools": ["bing_search", "crawl_*"],
        "max_iterations": 3,
    },
    "Programming": {"description": "Run code.", "tools": ["execute_python_code"]},
    "model": {"provider": "openai", "name": "gpt-4o-mini", "api_key_env": "KEY"},
    "mcp_servers": {
        "maps": {"transport": "stdio", "command": "maps-server", "env": {"TOKEN": "${TOKEN}"}},
        "web": {"transport": "streamable_http", "url": "http://127.0.0.1:9/mcp"},
    },
    "builtins": {
        "execute_python_code": {"timeout_s": 5},
        "execute_shell_command": {"allowed_commands": ["ls"]},
    },
    "defaults": {"max_iterations": 5, "tool_timeout_s": 30},
}
ENV = {"TOKEN": "token-value-123"}


def check_config(data: Any) -> None:
    """The property: a config, or a ConfigError that names where each problem is."""
    try:
        MetaToolsConfig.from_data(data, source="fuzz.json", env=ENV)
    except ConfigError as exc:
        assert exc.problems, "a ConfigError without problems"
        assert str(exc).startswith("fuzz.json: ")
        for problem in exc.problems:
            assert isinstance(problem, str) and problem.startswith("$"), problem
            assert "token-value-123" not in problem


@FUZZ
@given(json_values)
def test_random_json_gives_a_config_or_a_config_error(data: Any) -> None:
    check_config(data)


section_keys = st.sampled_from([*SECTIONS, "categories", "Search", "tools", "description"])


@FUZZ
@given(st.dictionaries(section_keys | st.text(max_size=6), json_values, max_size=5))
def test_random_sections_give_a_config_or_a_config_error(data: dict[str, Any]) -> None:
    check_config(data)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += paths(value, (*prefix, index))
    return found


@st.composite
def mutated_configs(draw: st.DrawFn) -> Any:
    data = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(data)))
        if not where:
            continue
        parent = data
        for part in where[:-1]:
            parent = parent[part]
        key = where[-1]
        action = draw(st.sampled_from(["delete", "replace", "add", "wrap", "env"]))
        if action == "delete":
            del parent[key]
        elif action == "replace":
            parent[key] = draw(json_values)
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.text(max_size=8))] = draw(json_values)
        elif action == "wrap":
            parent[key] = [parent[key]]
        elif action == "env":
            parent[key] = draw(st.sampled_from(["${TOKEN}", "${UNSET_VARIABLE}", "${", "$TOKEN"]))
    return data


@FUZZ
@given(mutated_configs())
def test_a_mutated_valid_config_gives_a_config_or_a_config_error(data: Any) -> None:
    check_config(data)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=200))
def test_a_config_file_of_random_bytes_gives_a_config_error(
    tmp_path_factory: pytest.TempPathFactory, content: bytes
) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "Meta_tool_config.json"
    path.write_bytes(content)
    try:
        MetaToolsConfig.load(path, env=ENV)
    except ConfigError as exc:
        assert exc.problems and str(exc).startswith(str(path))


def test_the_valid_config_used_for_mutations_is_valid() -> None:
    assert MetaToolsConfig.from_data(VALID, env=ENV).secrets == frozenset({"token-value-123"})


# -- tool-call arguments ----------------------------------------------------------------------


class Address(BaseModel):
    street: str
    number: int = Field(ge=1)


@tool
def book(
    city: str,
    nights: Annotated[int, Field(ge=1, le=30)],
    rooms: list[int],
    tags: dict[str, str] | None = None,
    kind: Literal["hotel", "hostel"] = "hotel",
    price: float = 0.0,
    breakfast: bool = False,
    address: Address | None = None,
) -> dict[str, Any]:
    """Book a stay."""
    return {"city": city, "nights": nights}


@tool
def no_arguments() -> str:
    """Takes nothing."""
    return "ok"


TOOLS: list[FunctionTool] = [book._tool, no_arguments._tool]  # type: ignore[attr-defined]
NAMES = ["city", "nights", "rooms", "tags", "kind", "price", "breakfast", "address"]
arguments = (
    json_values
    | st.text(max_size=40)
    | st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=6), json_values, max_size=6)
    | st.dictionaries(st.sampled_from(NAMES), json_values.map(json.dumps), max_size=6)
)


def check_readable(exc: ToolArgumentsError, name: str) -> None:
    text = str(exc)
    assert text.startswith(f"invalid arguments for tool {name!r}: ")
    assert exc.problems
    for problem in exc.problems:
        assert problem and problem.isprintable(), problem
        assert "Traceback" not in problem and "pydantic" not in problem.lower(), problem


@FUZZ
@given(st.sampled_from(TOOLS), arguments)
def test_random_arguments_give_values_or_a_readable_arguments_error(
    target: FunctionTool, raw: Any
) -> None:
    try:
        values = target.validate_arguments(raw)
    except ToolArgumentsError as exc:
        check_readable(exc, target.name)
        return
    assert set(values) <= set(target.args)


@settings(max_examples=60, deadline=None)
@given(arguments)
def test_random_arguments_through_a_call_never_raise_anything_but_tool_errors(raw: Any) -> None:
    async def call() -> None:
        try:
            await book._tool.call(raw)  # type: ignore[attr-defined]
        except ToolArgumentsError as exc:
            check_readable(exc, "book")

    anyio.run(call)


# -- MCP tool schemas -------------------------------------------------------------------------

schema_words = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "items",
        "enum",
        "anyOf",
        "oneOf",
        "description",
        "title",
        "default",
        "$ref",
        "$defs",
        "additionalProperties",
        "format",
        "minimum",
    ]
)
type_names = st.sampled_from(["string", "integer", "number", "boolean", "array", "object", "null"])
schema_values = st.recursive(
    scalars | type_names | st.lists(type_names | scalars, max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(schema_words | st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
property_names = st.sampled_from(["a", "model_config", "_id", "a b", "", "schema", "x"]) | st.text(
    max_size=8
)
input_schemas = st.dictionaries(schema_words, schema_values, max_size=4) | st.fixed_dictionaries(
    {"type": st.just("object")},
    optional={
        "properties": st.dictionaries(property_names, schema_values, max_size=5) | schema_values,
        "required": st.lists(property_names, max_size=4) | schema_values,
        "$defs": schema_values,
        "additionalProperties": schema_values,
    },
)


class Source:
    """The least an MCP source offers a tool: a name (calls are not made here)."""

    name = "fuzz-server"

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        return {"called": name}

    async def connect(self) -> None:
        return None

    def get_tool(self, name: str) -> McpServerTool | None:
        return None


@FUZZ
@given(input_schemas, arguments)
def test_any_schema_an_mcp_server_may_send_becomes_a_tool_that_never_crashes(
    schema: dict[str, Any], raw: Any
) -> None:
    try:
        remote = mcp_types.Tool(name="fuzzed", description="A fuzzed tool.", input_schema=schema)
    except ValidationError:
        return  # the MCP client refuses it before it reaches us
    found = McpServerTool(Source(), remote, "fuzzed")
    json.dumps(found.openai_schema())
    found.mcp_tool()
    anyio.run(found.get_prompt)
    anyio.run(found.get_prompt, "openai")
    try:
        found.validate_arguments(raw)
    except ToolArgumentsError as exc:
        check_readable(exc, "fuzzed")


@FUZZ
@given(
    st.dictionaries(property_names, st.tuples(schema_values, st.booleans()), max_size=6), arguments
)
def test_args_models_from_any_properties_validate_without_crashing(
    properties: dict[str, tuple[Any, bool]], raw: Any
) -> None:
    model = args_model_from_parameters("fuzzed", properties)
    try:
        values = validate_arguments("fuzzed", model, raw)
    except ToolArgumentsError as exc:
        check_readable(exc, "fuzzed")
        return
    # Required ones always; an optional one only when sent (the tool's default applies).
    required = {key for key, (_, needed) in properties.items() if needed}
    assert required <= set(values) <= set(properties)
