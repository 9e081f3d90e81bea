"""Config loading: the seed's format, sections, `${VAR}`, and errors that name the file and field."""

import json
from pathlib import Path

import jsonschema
import pytest

from meta_tools import FunctionTool
from meta_tools.cli.checks import editor_schema
from meta_tools.config import CategoryConfig, MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.guards import GUARDS
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader

SEED = Path(__file__).parent / "data" / "seed_config.json"
SEED_TOOLS = [
    "bing_search",
    "crawl_webpage",
    "get-tickets",
    "get-station-code-by-names",
    "execute_python_code",
    "execute_shell_command",
    "maps_geo",
    "maps_direction_driving",
    "maps_weather",
    "unrelated_tool",
]


def stand_in(name: str) -> FunctionTool:
    def run(query: str) -> str:
        """Stand-in tool."""
        return f"{name}:{query}"

    return FunctionTool(name, run, description=f"The {name} tool.")


def write(tmp_path: Path, data: object, name: str = "Meta_tool_config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def refused(path: Path, problems: int) -> list[str]:
    """The problems loading the config file at `path` reports, checked to name the file."""
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(path)
    assert str(caught.value).startswith(f"{path}: {problems} problem")
    return caught.value.problems


def test_the_seed_config_with_three_categories_loads_unchanged() -> None:
    tools = [stand_in(n) for n in SEED_TOOLS]
    meta = MetaManager.from_config(SEED, tools=tools, model=ScriptedModel([]))
    assert [(c.name, c.slug, [t.name for t in c.tools.list_tools()]) for c in meta.categories] == [
        (
            "Information Retrieval",
            "information_retrieval",
            ["bing_search", "crawl_webpage", "get-tickets", "get-station-code-by-names"],
        ),
        (
            "Programming & Tech Support",
            "programming_tech_support",
            ["execute_python_code", "execute_shell_command"],
        ),
        (
            "Location & Navigation",
            "location_navigation",
            ["maps_geo", "maps_direction_driving", "maps_weather"],
        ),
    ]
    assert meta.warnings == [
        "tool 'unrelated_tool' is in no category, so no agent can call it; to offer it, add to"
        ' a category "tools": ["unrelated_tool"]'
    ]
    assert meta.categories[0].tool_usage_notes.startswith("Use bing_search")


def test_unknown_key_bad_type_and_missing_tool_each_name_the_file_and_field(tmp_path: Path) -> None:
    data = json.loads(SEED.read_text())
    data["Information Retrieval"]["tool_notes"] = "typo"
    data["Location & Navigation"]["max_iterations"] = "many"
    path = write(tmp_path, data)
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(path)
    assert caught.value.problems == [
        "$.\"Information Retrieval\".tool_notes: unknown key; did you mean 'tool_usage_notes'?"
        " (valid keys: description, tool_usage_notes, tools, pinned, max_iterations,"
        " tool_timeout_s, max_tools_per_prompt, max_calls_per_round, max_tool_chars_per_prompt,"
        " abstain_below, cache)",
        '$."Location & Navigation".max_iterations: must be a whole number, not a string'
        " (got 'many')",
    ]
    assert str(caught.value).startswith(f"{path}: 2 problems:")

    data = json.loads(SEED.read_text())
    data["Information Retrieval"]["tools"][0] = "bing_serch"
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(
            write(tmp_path, data), tools=[stand_in(n) for n in SEED_TOOLS], model=ScriptedModel([])
        )
    assert caught.value.problems == [
        "$.\"Information Retrieval\".tools[0]: tool 'bing_serch' is listed but no source provides it; "
        "did you mean 'bing_search'?"
    ]


def test_a_glob_that_matches_nothing_and_invalid_json_are_reported(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"\$\.\"Location & Navigation\"\.tools\[0\]: pattern 'maps_\*' matches no tool",
    ):
        MetaManager.from_config(
            SEED, tools=[stand_in(n) for n in SEED_TOOLS[:6]], model=ScriptedModel([])
        )
    broken = tmp_path / "broken.json"
    broken.write_text('{"A": {"description": "x", "tools": ["a"],}}')
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(broken)
    assert caught.value.problems == [
        "not valid JSON, line 1 column 43: a trailing comma after the last item (JSON allows"
        " none); remove it\n"
        '      {"A": {"description": "x", "tools": ["a"],}}\n'
        "                                                ^"
    ]


def test_sections_and_env_expansion(tmp_path: Path) -> None:
    data = {
        "Maps": {
            "description": "Maps.",
            "tools": ["maps_*"],
            "max_iterations": 3,
            "tool_timeout_s": 2.5,
        },
        "model": {"provider": "openai", "name": "qwen-plus", "base_url": "${LLM_URL}/v1"},
        "defaults": {"max_iterations": 7},
    }
    config = MetaToolsConfig.load(write(tmp_path, data), env={"LLM_URL": "http://127.0.0.1:9"})
    assert config.model.base_url == "http://127.0.0.1:9/v1"
    assert config.secrets == frozenset({"http://127.0.0.1:9"})
    meta = MetaManager.from_config(config, tools=[stand_in("maps_geo")], model=ScriptedModel([]))
    category = meta.get_category("Maps")
    assert (category.max_iterations, category.tool_timeout_s) == (3, 2.5)

    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(write(tmp_path, data), env={})
    assert caught.value.problems == ["$.model.base_url: environment variable 'LLM_URL' is not set"]


def test_a_misspelled_section_is_named_as_such_and_not_read_as_a_category() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {"A": {"description": "a", "tools": ["x"]}, "defualts": {"max_iterations": 3}},
            source="c.json",
        )
    assert caught.value.problems == [
        "$.defualts: not a section name; did you mean the section 'defaults'? (any other"
        " top-level key is read as a category; what follows from it is checked once it is"
        " renamed)"
    ]


def test_a_category_missing_its_fields_still_gets_the_section_hint() -> None:
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(
            {"A": {"description": "a", "tools": ["x"]}, "Defaults": {"tools": ["y"]}},
            source="c.json",
        )
    assert caught.value.problems == [
        "$.\"Defaults\".description: field required; did you mean the section 'defaults'?"
    ]


def test_the_config_json_schema_is_exported() -> None:
    schema = MetaToolsConfig.model_json_schema()
    assert set(schema["properties"]) == {
        "$schema",
        "$comment",
        "model",
        "mcp_servers",
        "python_tools",
        "builtins",
        "defaults",
        "prompts_dir",
        "memory",
        "serve",
        "routing",
        "guards",
    }
    assert schema["additionalProperties"] == {"$ref": "#/$defs/CategoryConfig"}
    assert schema["$defs"]["CategoryConfig"]["required"] == ["description", "tools"]


def test_an_editor_schema_pointer_is_not_a_category() -> None:
    config = MetaToolsConfig.from_data(
        {"$schema": "./meta-tools.schema.json", "A": {"description": "a", "tools": ["x"]}}
    )
    assert list(config.categories) == ["A"]


def test_a_schema_pointer_and_a_comment_are_ignored_beside_categories_nested_or_not() -> None:
    notes = {"$schema": "./meta-tools.schema.json", "$comment": ["for people"]}
    category = {"A": {"description": "a", "tools": ["x"]}}
    for data in ({**notes, **category}, {**notes, "categories": category}):
        assert list(MetaToolsConfig.from_data(data).categories) == ["A"]


def test_an_mcp_server_with_a_command_and_no_transport_is_a_stdio_server() -> None:
    config = MetaToolsConfig.from_data(
        {
            "A": {"description": "a", "tools": ["x"]},
            "mcp_servers": {"demo": {"command": "python", "args": ["-m", "meta_tools.demo"]}},
        }
    )
    assert config.mcp_servers["demo"].transport == "stdio"


def test_an_mcp_server_with_a_url_and_no_transport_is_a_streamable_http_server(
    tmp_path: Path,
) -> None:
    """It was refused with pydantic's "Unable to extract tag using discriminator"."""
    path = tmp_path / "Meta_tool_config.json"
    servers = {"maps": {"url": "http://127.0.0.1:8000/mcp", "headers": {"X-Key": "k"}}}
    path.write_text(json.dumps({"A": {"description": "a", "tools": ["x"]}, "mcp_servers": servers}))
    server = MetaToolsConfig.load(path).mcp_servers["maps"]
    assert server.transport == "streamable_http"
    assert (server.url, server.headers) == ("http://127.0.0.1:8000/mcp", {"X-Key": "k"})
    # The editor's schema (`meta-tools schema`) takes the same entry.
    jsonschema.validate(json.loads(path.read_text()), editor_schema())


@pytest.mark.parametrize("text", ["\n", "\n\n", '{"a":\u2028', '{\n  "a": 1,\n}\u2029'])
def test_a_json_syntax_error_on_any_line_is_reported_with_its_line(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(path)
    assert "not valid JSON, line" in caught.value.problems[0]


CATEGORY = {"description": "Search the web.", "tools": ["bing_search"]}


def test_category_names_that_cannot_be_told_apart_as_function_names_name_the_file_and_path(
    tmp_path: Path,
) -> None:
    path = write(
        tmp_path,
        {
            "Web Search": CATEGORY,
            "web_search": CATEGORY,
            "Any Category": CATEGORY,
            "!!!": CATEGORY,
            "": CATEGORY,
            "Maps": {**CATEGORY, "tool_notes": "typo"},
        },
    )
    assert refused(path, 5) == [
        "$.\"Maps\".tool_notes: unknown key; did you mean 'tool_usage_notes'?"
        " (valid keys: description, tool_usage_notes, tools, pinned, max_iterations,"
        " tool_timeout_s, max_tools_per_prompt, max_calls_per_round, max_tool_chars_per_prompt,"
        " abstain_below, cache)",
        "$.\"web_search\": categories 'Web Search' and 'web_search' have the same function name"
        " 'web_search' (names are compared in lower case, words joined by '_'); rename one",
        "$.\"Any Category\": category 'Any Category' has the function name 'any_category', which"
        " is the router's own tool for reaching any category; rename it",
        "$.\"!!!\": category name '!!!' leaves nothing for its function name (the name the main"
        " agent calls it by, made of its letters and digits); rename it",
        "$.\"\": category name '' leaves nothing for its function name (the name the main"
        " agent calls it by, made of its letters and digits); rename it",
    ]
    # The same in the `categories` section format, and through the router.
    path = write(tmp_path, {"categories": {"Web Search": CATEGORY, "web_search": CATEGORY}})
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(path, tools=[stand_in("bing_search")], model=ScriptedModel([]))
    assert caught.value.source == str(path)
    assert caught.value.problems[0].startswith(
        "$.\"web_search\": categories 'Web Search' and 'web_search' have the same function name"
    )


def test_a_config_made_in_code_with_a_name_clash_is_refused_with_its_source_and_path() -> None:
    config = MetaToolsConfig(categories={"Any category": CategoryConfig(**CATEGORY)})
    with pytest.raises(ConfigError) as caught:
        MetaManager.from_config(config, tools=[stand_in("bing_search")], model=ScriptedModel([]))
    assert str(caught.value).startswith("<memory>: 1 problem:")
    assert caught.value.problems[0].startswith(
        "$.\"Any category\": category 'Any category' has the function name 'any_category'"
    )


@pytest.mark.anyio
async def test_a_reload_that_makes_two_categories_one_function_name_is_refused(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, {"Web Search": CATEGORY})
    meta = MetaManager.from_config(path, tools=[stand_in("bing_search")], model=ScriptedModel([]))
    reloader = ConfigReloader(meta, path)
    write(tmp_path, {"Web Search": CATEGORY, "web search!": CATEGORY})
    outcome = await reloader.reload_now()
    assert outcome is not None and not outcome.applied
    assert outcome.source == str(path.resolve())
    assert outcome.problems == (
        "$.\"web search!\": categories 'Web Search' and 'web search!' have the same function"
        " name 'web_search' (names are compared in lower case, words joined by '_'); rename one",
    )
    assert [c.name for c in meta.categories] == ["Web Search"]
    write(tmp_path, {"Web Search": CATEGORY, "News": CATEGORY})
    outcome = await reloader.reload_now()
    assert outcome is not None and outcome.applied
    assert [c.slug for c in meta.categories] == ["web_search", "news"]


@pytest.mark.parametrize("transport", ["sse", "streamable_http"])
def test_an_unknown_key_of_an_http_server_lists_the_http_keys(
    tmp_path: Path, transport: str
) -> None:
    server = {"transport": transport, "url": "http://127.0.0.1:9/mcp", "header": {"X": "y"}}
    path = write(tmp_path, {"Web": CATEGORY, "mcp_servers": {"search": server}})
    assert refused(path, 1) == [
        "$.mcp_servers.search.header: unknown key; did you mean 'headers'?"
        " (valid keys: prefix, connect, timeout_s, cache, transport, url, headers, auth, scope)"
    ]


def test_a_server_or_category_named_like_a_transport_keeps_its_place_in_the_path(
    tmp_path: Path,
) -> None:
    server = {"transport": "sse", "url": "ftp://example.com", "timeout": 3}
    path = write(tmp_path, {"stdio": {"description": ""}, "mcp_servers": {"sse": server}})
    assert refused(path, 4) == [
        """$."stdio".description: must not be empty""",
        '$."stdio".tools: field required',
        "$.mcp_servers.sse.url: must start with http:// or https:// (got 'ftp://example.com')",
        "$.mcp_servers.sse.timeout: unknown key; did you mean 'timeout_s'?"
        " (valid keys: prefix, connect, timeout_s, cache, transport, url, headers, auth, scope)",
    ]


def test_a_category_named_categories_is_a_category_not_the_section(tmp_path: Path) -> None:
    path = write(tmp_path, {"Web": CATEGORY, "categories": CATEGORY})
    assert list(MetaToolsConfig.load(path).categories) == ["Web", "categories"]
    path = write(tmp_path, {"Web": CATEGORY, "categories": {**CATEGORY, "tools": []}})
    assert refused(path, 1) == ['$."categories".tools: list at least one tool']
    # A `categories` object of categories is still the section.
    config = MetaToolsConfig.from_data({"categories": {"Web": CATEGORY}, "defaults": {}})
    assert list(config.categories) == ["Web"]


# Each kind of error that validating a config can give, as the user reads it: the field's
# path, then what is wrong in our words (issue 50: `List should have at least 1 item after
# validation, not 0` reached users as pydantic wrote it).
_A_TOOL = {"description": "d", "tools": ["t"]}


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ({"Math": {"description": "d", "tools": []}}, '$."Math".tools: list at least one tool'),
        ({"Math": {"description": "", "tools": ["t"]}}, '$."Math".description: must not be empty'),
        ({"Math": {"tools": ["t"]}}, '$."Math".description: field required'),
        (
            {"Math": {**_A_TOOL, "tool": ["t"]}},
            "$.\"Math\".tool: unknown key; did you mean 'tools'? (valid keys: description,"
            " tool_usage_notes, tools, pinned, max_iterations, tool_timeout_s,"
            " max_tools_per_prompt, max_calls_per_round, max_tool_chars_per_prompt,"
            " abstain_below, cache)",
        ),
        (
            {"Math": {"description": "d", "tools": "add"}},
            "$.\"Math\".tools: must be a list, not a string (got 'add')",
        ),
        (
            {"Math": {"description": "d", "tools": ["add", None]}},
            '$."Math".tools[1]: must be a string, not null',
        ),
        ({"Math": "add"}, "$.\"Math\": must be an object, not a string (got 'add')"),
        (
            {"defaults": {"max_iterations": "many"}, "Math": _A_TOOL},
            "$.defaults.max_iterations: must be a whole number, not a string (got 'many')",
        ),
        (
            {"model": {"seed": 1.5}, "Math": _A_TOOL},
            "$.model.seed: must be a whole number, not a number with a fraction (got 1.5)",
        ),
        (
            {"defaults": {"abstain_below": "high"}, "Math": _A_TOOL},
            "$.defaults.abstain_below: must be a number, not a string (got 'high')",
        ),
        (
            {"model": {"timeout_s": 0}, "Math": _A_TOOL},
            "$.model.timeout_s: must be more than 0 (got 0)",
        ),
        (
            {"Math": {**_A_TOOL, "max_iterations": 0}},
            '$."Math".max_iterations: must be at least 1 (got 0)',
        ),
        (
            {"routing": {"max_categories": 1000}, "Math": _A_TOOL},
            "$.routing.max_categories: must be at most 256 (got 1000)",
        ),
        (
            {"model": {"provider": "openia"}, "Math": _A_TOOL},
            "$.model.provider: 'openia' is not one of 'openai', 'dashscope', 'sampling';"
            " did you mean 'openai'?",
        ),
        (
            {"mcp_servers": {"s": {"transport": "websocket", "url": "ws://x"}}, "Math": _A_TOOL},
            "$.mcp_servers.s.transport: 'websocket' is not one of 'stdio', 'streamable_http',"
            " 'sse'",
        ),
        (
            {"mcp_servers": {"s": {"args": ["-y"]}}, "Math": _A_TOOL},
            '$.mcp_servers.s: a server needs "command" (a program to start, over stdio) or'
            ' "url" (a server over HTTP)',
        ),
        (
            {"mcp_servers": {"s": {"command": "x", "url": "http://h"}}, "Math": _A_TOOL},
            "$.mcp_servers.s.url: unknown key for this stdio server (it has 'command'): a"
            ' server has either "command" (stdio) or "url" (HTTP); keep one',
        ),
        (
            {"mcp_servers": {"s": {"url": "ftp://h"}}, "Math": _A_TOOL},
            "$.mcp_servers.s.url: must start with http:// or https:// (got 'ftp://h')",
        ),
        (
            {"mcp_servers": {"s": {"command": "x", "prefix": "my fs"}}, "Math": _A_TOOL},
            "$.mcp_servers.s.prefix: must be 1 to 32 letters, digits, '_' or '-' (got 'my fs')",
        ),
        (
            {"builtins": {"execute_shell_command": {"allowed_commands": []}}, "Math": _A_TOOL},
            "$.builtins.execute_shell_command.allowed_commands: list at least one program",
        ),
        (
            {"memory": {"redis_url": "http://user:pw@h"}, "Math": _A_TOOL},
            "$.memory.redis_url: must start with redis://, rediss:// or unix:// (the value is"
            " not shown)",
        ),
        (
            {"model": {"name": "x"}},
            '$.categories: the file has no category; add one, e.g. "Math": {"description":'
            ' "Arithmetic.", "tools": ["calculate"]}',
        ),
        (
            {"guards": {"disable": ["text_call"]}, "Math": _A_TOOL},
            "$.guards.disable: 'text_call' is no guard; did you mean 'text_calls',"
            " 'unread_call'? known: " + ", ".join(g.name for g in GUARDS),
        ),
    ],
)
def test_each_kind_of_config_error_names_the_field_and_says_what_is_wrong_in_plain_words(
    tmp_path: Path, data: dict[str, object], problem: str
) -> None:
    assert refused(write(tmp_path, data), 1) == [problem]


def test_no_config_error_quotes_pydantic(tmp_path: Path) -> None:
    bad: dict[str, object] = {
        "model": {"provider": 1, "max_retries": [], "temperature": "hot", "extra_body": 3},
        "mcp_servers": {"a": {"command": ""}, "b": {"transport": "x"}, "c": {"cwd": "."}},
        "defaults": {"max_tool_chars_per_prompt": 10, "max_iterations": 1e30},
        "serve": {"state_keys": "short", "max_state_bytes": True},
        "guards": {"profile": None, "budgets": {"text_calls": -1}},
        "python_tools": "tools.py",
        "builtins": {"read_file": {"roots": []}},
        "A": {"description": None, "tools": [], "pinned": {}, "cache": {"ttl_s": -1}},
        "B": [],
    }
    problems = refused(write(tmp_path, bad), 20)
    pydantic_words = ("Input should", "should have", "after validation", "Value error", "Field")
    assert [p for p in problems if any(w in p for w in pydantic_words)] == []
    assert all(p.startswith("$.") and ": " in p for p in problems)
    assert "$.defaults.max_iterations: is too large a number (got 1e+30)" in problems
