"""Hot reload: a valid edit regroups a running router, an invalid one changes nothing."""

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ClosedError
from meta_tools.llm import (
    AssistantTurn,
    ChatRequest,
    Message,
    OpenAIChatModel,
    ScriptedModel,
    ToolCall,
)
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader, ReloadOutcome
from tests.cli_process import Output, meta_tools_command
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio

GATES: dict[str, tuple[anyio.Event, anyio.Event]] = {}
"""Per gate name: (the tool has started, the test lets it finish)."""


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@tool
def reverse(text: str) -> str:
    """Reverse a text."""
    return text[::-1]


@tool
async def wait_for_gate(name: str) -> str:
    """Wait until the test opens the named gate."""
    entered, release = GATES[name]
    entered.set()
    await release.wait()
    return f"gate {name} passed"


def first_tool_model() -> ScriptedModel:
    """Calls the first offered tool with the exact input, then answers with its result."""

    def answer(request: ChatRequest) -> AssistantTurn:
        if request.messages[-1].role == "user" and len(request.messages) == 2:
            text = request.messages[1].content.split("Exact input: ", 1)[1]
            name = request.tools[0].name
            key = "name" if name == "wait_for_gate" else "text"
            return AssistantTurn(tool_calls=[ToolCall(name=name, arguments={key: text})])
        results = [m.content for m in request.messages if m.role == "tool"]
        return AssistantTurn(text=results[-1].splitlines()[1])

    return ScriptedModel.from_function(answer)


TWO_GROUPS = {
    "Text": {"description": "Transform text.", "tools": ["shout", "reverse"]},
    "Waiting": {"description": "Wait for things.", "tools": ["wait_for_gate"]},
}
REGROUPED = {
    "Loud": {"description": "Make text loud.", "tools": ["shout"]},
    "Backwards": {"description": "Turn text around.", "tools": ["reverse"]},
    "Waiting": {"description": "Wait for things.", "tools": ["wait_for_gate"]},
}


def write(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)


def build(path: Path) -> MetaManager:
    return MetaManager.from_config(
        path, tools=[shout, reverse, wait_for_gate], model=first_tool_model()
    )


def names(meta: MetaManager) -> list[str]:
    return [t.name for t in meta.list_tools()]


async def test_a_valid_reload_regroups_at_once_while_a_call_in_flight_finishes_on_the_old_category(
    tmp_path: Path,
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, TWO_GROUPS)
    meta = build(path)
    entered, release = GATES["reload"] = (anyio.Event(), anyio.Event())
    results: list[Any] = []
    async with meta, anyio.create_task_group() as group:

        async def call_waiting() -> None:
            arguments = {"objective": "wait", "exact_input": "reload"}
            results.append(await meta.call_tool("waiting", arguments))

        group.start_soon(call_waiting)
        with anyio.fail_after(10):
            await entered.wait()
        waiting_before = meta.get_category("waiting")
        write(path, REGROUPED)
        assert await meta.reload(MetaToolsConfig.load(path)) == []
        assert names(meta) == ["loud", "backwards", "waiting"]
        assert meta.get_category("waiting") is not waiting_before
        loud = await meta.call_tool("loud", {"objective": "shout it", "exact_input": "hi"})
        assert (loud.category, loud.status, loud.summary) == ("Loud", "success", "HI")
        release.set()
    (in_flight,) = results
    assert (in_flight.category, in_flight.status, in_flight.summary) == (
        "Waiting",
        "success",
        "gate reload passed",
    )


async def test_a_category_that_keeps_its_name_keeps_its_session_memory(tmp_path: Path) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, TWO_GROUPS)
    meta = build(path)
    await meta.call_tool("text", {"objective": "shout it", "exact_input": "a"}, session="s1")
    renamed = {**TWO_GROUPS, "Text": {**TWO_GROUPS["Text"], "description": "Edit text."}}
    write(path, renamed)
    await meta.reload(MetaToolsConfig.load(path))
    text = meta.get_category("text")
    assert (text.description, await text.past_runs("s1")) == (
        "Edit text.",
        [{"objective": "shout it", "summary": "A"}],
    )


async def test_an_invalid_edit_keeps_the_running_categories_and_reports_every_problem(
    tmp_path: Path,
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, TWO_GROUPS)
    meta = build(path)
    seen: list[ReloadOutcome] = []

    async def record(outcome: ReloadOutcome) -> None:
        seen.append(outcome)

    reloader = ConfigReloader(meta, path, on_reload=record)
    broken = {
        "Loud": {"description": "Make text loud.", "tools": ["shuot"]},
        "Backwards": {"description": "", "tools": ["reverse"], "max_iterations": 0},
    }
    write(path, broken)
    outcome = await reloader.reload_now()
    assert outcome == ReloadOutcome(
        str(path.resolve()),
        applied=False,
        problems=(
            """$."Backwards".description: must not be empty""",
            '$."Backwards".max_iterations: must be at least 1 (got 0)',
        ),
    )
    assert seen == [outcome]
    assert names(meta) == ["text", "waiting"]
    write(path, {**broken, "Backwards": {"description": "Turn.", "tools": ["reverse"]}})
    outcome = await reloader.reload_now()
    assert outcome is not None and outcome.problems == (
        """$."Loud".tools[0]: tool 'shuot' is listed but no source provides it; did you mean 'shout'?""",
    )
    assert names(meta) == ["text", "waiting"]
    assert await reloader.reload_now() is None  # the same broken content is reported once


async def test_an_edit_of_mcp_servers_applies_the_rest_and_says_the_servers_need_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    write(path, TWO_GROUPS)
    meta = build(path)
    servers = {"mcp_servers": {"demo": {"transport": "stdio", "command": "python"}}}
    regrouped = {**TWO_GROUPS, "Text": {**TWO_GROUPS["Text"], "description": "Edited."}}
    write(path, {**regrouped, **servers, "builtins": {"execute_python_code": {}}})
    warnings = await meta.reload(MetaToolsConfig.load(path))
    restart = [w for w in warnings if "restart" in w]
    assert restart == [
        f"$.{section}: changed, but tool sources are not reloaded; restart the service to"
        " apply it (the rest of the edit is applied)"
        for section in ("mcp_servers", "builtins")
    ]
    assert names(meta) == ["text", "waiting"]
    assert meta.get_category("text").description == "Edited."
    assert meta.config is not None and meta.config.mcp_servers == {}  # the running sources


async def test_a_model_replaced_by_a_reload_is_closed_once_the_calls_using_it_have_ended(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-reload-test-key")
    model = {
        "provider": "openai",
        "name": "first",
        "base_url": llm_server.openai_base_url,
        "api_key_env": "FAKE_LLM_KEY",
        "max_retries": 0,
    }
    path = tmp_path / "Meta_tool_config.json"
    write(path, {**TWO_GROUPS, "model": model})
    meta = MetaManager.from_config(path, tools=[shout, reverse, wait_for_gate])
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("c1", "wait_for_gate", {"name": "model"}))),
        Reply(body=openai_text_reply("gate model passed")),
    )
    entered, release = GATES["model"] = (anyio.Event(), anyio.Event())
    hello = ChatRequest(messages=[Message(role="user", content="hello")])
    results: list[Any] = []

    async def call_waiting() -> None:
        arguments = {"objective": "wait", "exact_input": "model"}
        results.append(await meta.call_tool("waiting", arguments))

    async with meta:
        first = meta.get_category("waiting").model
        assert meta.model is first  # a main agent can run on the config's model
        async with anyio.create_task_group() as group:
            group.start_soon(call_waiting)
            with anyio.fail_after(10):
                await entered.wait()
            write(path, {**TWO_GROUPS, "model": {**model, "name": "second"}})
            assert await meta.reload(MetaToolsConfig.load(path)) == []
            second = meta.get_category("waiting").model
            assert meta.model is second and second is not first
            release.set()
        (in_flight,) = results
        assert (in_flight.status, in_flight.summary) == ("success", "gate model passed")
        assert [r.body["model"] for r in llm_server.requests] == ["first", "first"]
        assert isinstance(first, OpenAIChatModel) and isinstance(second, OpenAIChatModel)
        with pytest.raises(ClosedError, match="was closed"):
            await first.complete(hello)
        llm_server.enqueue(Reply(body=openai_text_reply("still open")))
        assert (await second.complete(hello)).text == "still open"
        write(path, {**TWO_GROUPS, "model": {**model, "name": "third"}})
        await meta.reload(MetaToolsConfig.load(path))  # no call uses `second`: closed at once
        third = meta.get_category("waiting").model
        with pytest.raises(ClosedError, match="was closed"):
            await second.complete(hello)
    with pytest.raises(ClosedError, match="was closed"):
        await third.complete(hello)


async def test_the_watcher_applies_an_edit_of_the_file_and_of_a_prompt_template(
    tmp_path: Path,
) -> None:
    prompts = tmp_path / "prompts"
    prompts.mkdir()
    path = tmp_path / "Meta_tool_config.json"
    write(path, {**TWO_GROUPS, "prompts_dir": "prompts"})
    meta = build(path)
    outcomes: list[ReloadOutcome] = []
    changed = anyio.Event()

    async def record(outcome: ReloadOutcome) -> None:
        outcomes.append(outcome)
        changed.set()

    reloader = ConfigReloader(meta, path, on_reload=record, debounce_ms=50)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            await group.start(reloader.run)
            write(path, {**REGROUPED, "prompts_dir": "prompts"})
            await changed.wait()
            assert names(meta) == ["loud", "backwards", "waiting"]
            changed = anyio.Event()
            (prompts / "tool_selection.j2").write_text("Custom selection for {{ category }}.")
            await changed.wait()
            group.cancel_scope.cancel()
    assert [(o.applied, o.categories) for o in outcomes] == [
        (True, ("Loud", "Backwards", "Waiting")),
        (True, ("Loud", "Backwards", "Waiting")),
    ]
    loud = meta.get_category("loud")
    assert loud.prompts.tool_selection.render(category="Loud") == "Custom selection for Loud."


def demo_categories(groups: dict[str, list[str]]) -> dict[str, Any]:
    return {
        name: {"description": f"{name} tools.", "tools": tools} for name, tools in groups.items()
    }


NUMBERS = ["calculate", "convert_units", "describe_numbers"]
DATES = ["convert_time_zone", "date_difference", "shift_date", "describe_date", "month_calendar"]


async def test_serve_over_http_applies_a_regrouping_edit_and_keeps_answering_after_a_broken_one(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    model = {
        "provider": "openai",
        "name": "fake-model",
        "base_url": llm_server.openai_base_url,
        "api_key_env": "FAKE_LLM_KEY",
        "max_retries": 0,
    }
    server = {"transport": "stdio", "command": "python", "args": ["-m", "meta_tools.demo"]}
    base = {"model": model, "mcp_servers": {"demo": server}}
    path = tmp_path / "Meta_tool_config.json"
    write(path, {**base, **demo_categories({"Numbers": NUMBERS, "Dates": DATES})})
    command = meta_tools_command()
    command += ["serve", "--transport", "http", "--port", "0", "--config", str(path)]
    env = {**os.environ, "FAKE_LLM_KEY": "sk-test"}
    process = await anyio.open_process(command, env=env, cwd=tmp_path)
    assert process.stderr is not None
    lines = Output(process.stderr)
    try:
        with anyio.fail_after(60):
            serving = await lines.wait_for("serving 2 category tools", timeout=60)
            url = serving.rsplit(" on ", 1)[1].strip()
            await lines.wait_for("watching")
            async with Client(url) as client:
                listed = await client.list_tools()
                assert [t.name for t in listed.tools] == ["numbers", "dates"]

                write(path, {**base, **demo_categories({"Numbers & Dates": NUMBERS + DATES})})
                await lines.wait_for("reloaded, 1 categories: Numbers & Dates")
                listed = await client.list_tools(cache_mode="refresh")
                assert [t.name for t in listed.tools] == ["numbers_dates"]

                broken = {**base, "Oops": {"description": "", "tools": ["calculate"]}}
                write(path, {**broken, "defaults": {"max_iterations": 0}})
                await lines.wait_for("edit not applied")
                problems = [(await lines.wait_for("- $.")).strip() for _ in range(2)]
                assert sorted(problems) == [
                    """- $."Oops".description: must not be empty""",
                    "- $.defaults.max_iterations: must be at least 1 (got 0)",
                ]
                listed = await client.list_tools(cache_mode="refresh")
                assert [t.name for t in listed.tools] == ["numbers_dates"]
                llm_server.enqueue(
                    Reply(
                        body=openai_tool_reply(
                            wire_tool_call("call_1", "calculate", {"expression": "6 * 7"})
                        )
                    ),
                    Reply(body=openai_text_reply("6 * 7 = 42")),
                )
                answer = await client.call_tool(
                    "numbers_dates", {"objective": "multiply", "exact_input": "6 * 7"}
                )
                assert answer.is_error is False
                assert answer.structured_content is not None
                result = answer.structured_content
                assert (result["category"], result["status"], result["summary"]) == (
                    "Numbers & Dates",
                    "success",
                    "6 * 7 = 42",
                )
                assert result["executions"][0]["result"] == '{"expression": "6 * 7", "result": 42}'
    finally:
        process.send_signal(signal.SIGINT)
        with anyio.move_on_after(20):
            await process.wait()
        if process.returncode is None:
            process.kill()
        await process.aclose()
    assert process.returncode == 130, lines.text


async def test_a_router_built_in_code_has_no_model_of_its_own_and_says_so() -> None:
    from meta_tools import CategoryManager, ModelError

    model = first_tool_model()
    meta = MetaManager([CategoryManager("Text", "Transform text.", [shout], model)])
    with pytest.raises(ModelError, match="pass your model to MainAgent"):
        _ = meta.model
