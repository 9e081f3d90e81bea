"""A capable model does the right thing in a category called by an MCP host: the router
served as an MCP server (`meta_tools.serve`), a real client connected in memory. The
host gets the model's answer as the result's summary, with no extra model call, no
extra tool or category run, and every call the model made run as written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from meta_tools.llm import ChatRequest, ScriptedModel
from tests.capable.conftest import (
    Toolbox,
    answer,
    calls,
    categories_asked,
    router,
    router_from_config,
    served,
    task,
    used_up,
)

pytestmark = pytest.mark.anyio


def whole(result: Any) -> dict[str, Any]:
    """The category result a host reads, without the timings that differ each run."""
    content = dict(result.structured_content or {})
    assert json.loads(result.content[0].text) == content
    content.pop("usage")
    for execution in content.get("executions", []):
        execution.pop("duration_s")
    return content


async def test_the_host_gets_the_weather_in_the_capital_of_france(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [calls(("get_weather", {"city": "Paris"})), answer("Paris: 18 °C with light rain.")]
    )
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "weather", task("What's the weather in the capital of France?", "capital of France")
        )

    assert result.is_error is False
    assert whole(result) == {
        "category": "Weather",
        "status": "success",
        "summary": "Paris: 18 °C with light rain.",
        "executions": [
            {
                "tool": "get_weather",
                "arguments": {"city": "Paris"},
                "ok": True,
                "result": '{"city": "Paris", "temperature_c": 18, "conditions": "light rain"}',
                "round": 1,
                "cached": False,
            }
        ],
        "iterations": 1,
    }
    used_up(model, 2)
    assert toolbox.ran == [("get_weather", {"city": "Paris"})]


async def test_the_host_gets_a_terse_total_the_model_added_up(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    february = {"account": "checking", "month": "2026-02"}
    model = ScriptedModel([calls(("list_transactions", february)), answer("$848.55")])
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "finance", task("Total card spending in February 2026", "checking, 2026-02")
        )

    content = whole(result)
    assert (content["status"], content["summary"]) == ("success", "$848.55")
    used_up(model, 2)
    assert toolbox.ran == [("list_transactions", february)]


async def test_the_host_sees_a_sent_email_once_and_in_the_result(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    email = {"to": "bob@example.com", "subject": "Invoice", "body": "Hi Bob, invoice attached."}
    model = ScriptedModel([calls(("send_email", email)), answer("Emailed the invoice to Bob.")])
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "messaging", task("Email Bob the invoice", "bob@example.com; invoice attached")
        )

    assert whole(result) == {
        "category": "Messaging",
        "status": "success",
        "summary": "Emailed the invoice to Bob.",
        "executions": [
            {
                "tool": "send_email",
                "arguments": email,
                "ok": True,
                "result": '{"status": "ok", "to": "bob@example.com", "errors": []}',
                "round": 1,
                "cached": False,
            }
        ],
        "iterations": 1,
    }
    used_up(model, 2)
    assert "found nothing" not in (model.requests[1].messages[-1].content or "")
    assert toolbox.ran == [("send_email", email)]


async def test_the_host_polls_a_build_twice_and_hears_that_it_passed(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    poll = ("build_status", {"build_id": "b-1042"})
    model = ScriptedModel(
        [
            calls(poll),
            answer("Build b-1042 is running (60%)."),
            calls(poll),
            answer("Build b-1042 passed."),
        ]
    )
    meta = router(toolbox, {"Builds": model}, profile=profile)
    status = task("Status of a CI build", "b-1042")
    async with served(meta) as client:
        first = await client.call_tool("builds", status)
        second = await client.call_tool("builds", status)

    assert [whole(first)["summary"], whole(second)["summary"]] == [
        "Build b-1042 is running (60%).",
        "Build b-1042 passed.",
    ]
    used_up(model, 4)
    assert toolbox.ran == [poll, poll]


async def test_a_spanish_host_gets_the_conversion_in_spanish(profile: str | None) -> None:
    toolbox = Toolbox()
    conversion = {"amount": 80.0, "from_currency": "EUR", "to_currency": "USD"}
    model = ScriptedModel(
        [calls(("convert_currency", conversion)), answer("80 euros son 86,96 dólares.")]
    )
    meta = router(toolbox, {"Finance": model}, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "finance", task("Convertir euros a dólares", "80 euros a dólares")
        )

    content = whole(result)
    assert (content["status"], content["summary"]) == ("success", "80 euros son 86,96 dólares.")
    used_up(model, 2)
    assert toolbox.ran == [("convert_currency", conversion)]


async def test_a_german_host_gets_the_weekday_in_german(profile: str | None) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("describe_date", {"date": "2026-12-24"})),
            answer("Der 24. Dezember 2026 ist ein Donnerstag."),
        ]
    )
    meta = router(toolbox, {"Dates": model}, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "dates", task("Wochentag von Heiligabend 2026", "24.12.2026")
        )

    content = whole(result)
    assert (content["status"], content["summary"]) == (
        "success",
        "Der 24. Dezember 2026 ist ein Donnerstag.",
    )
    used_up(model, 2)
    assert toolbox.ran == [("describe_date", {"date": "2026-12-24"})]


async def test_a_host_s_calls_to_two_categories_at_once_both_run(profile: str | None) -> None:
    toolbox = Toolbox()
    weather = ScriptedModel(
        [calls(("get_weather", {"city": "London"})), answer("London: 11 °C, drizzle.")]
    )
    files = ScriptedModel(
        [calls(("list_files", {"folder": "src"})), answer("src holds app.py and util.py.")]
    )
    meta = router(toolbox, {"Weather": weather, "Files": files}, profile=profile)
    summaries: dict[str, str] = {}
    async with served(meta) as client:

        async def call(name: str, arguments: dict[str, str]) -> None:
            summaries[name] = whole(await client.call_tool(name, arguments))["summary"]

        async with anyio.create_task_group() as group:
            group.start_soon(call, "weather", task("Current weather", "London"))
            group.start_soon(call, "files", task("List a folder", "src"))

    assert summaries == {
        "weather": "London: 11 °C, drizzle.",
        "files": "src holds app.py and util.py.",
    }
    used_up(weather, 2)
    used_up(files, 2)
    assert categories_asked(meta) == {"Weather": 2, "Files": 2}
    assert sorted(toolbox.ran, key=str) == [
        ("get_weather", {"city": "London"}),
        ("list_files", {"folder": "src"}),
    ]


async def test_the_host_is_asked_for_a_recipient_that_is_missing(profile: str | None) -> None:
    toolbox = Toolbox()
    question = "Who should get the message, and on which channel?"
    model = ScriptedModel(
        [calls(("request_input", {"missing": ["recipient"], "question": question}))]
    )
    meta = router(toolbox, {"Messaging": model}, profile=profile)
    async with served(meta) as client:
        result = await client.call_tool(
            "messaging", task("Send a message", "Remind them about the 3 pm demo")
        )

    assert whole(result) == {
        "category": "Messaging",
        "status": "insufficient_input",
        "summary": question,
        "executions": [],
        "iterations": 0,
        "missing": ["recipient"],
        "question": question,
    }
    used_up(model, 1)
    assert toolbox.ran == []


async def test_a_model_that_answers_from_the_request_needs_one_call_per_city(
    profile: str | None,
) -> None:
    """A category's model written as a function of what it is asked (as a real one is):
    three host calls at once, one tool call and one answer each."""
    toolbox = Toolbox()

    def weather_model(request: ChatRequest) -> Any:
        last = request.messages[-1]
        if last.role == "user" and "Exact input: " in (last.content or ""):
            city = (last.content or "").rsplit("Exact input: ", 1)[1]
            return calls(("get_weather", {"city": city}))
        result = next(m.content for m in request.messages if m.role == "tool")
        found = json.loads(result.split("\n")[1])  # inside its <tool_result> tags
        return answer(f"{found['city']}: {found['temperature_c']} °C, {found['conditions']}.")

    model = ScriptedModel.from_function(weather_model)
    meta = router(toolbox, {"Weather": model}, profile=profile)
    summaries: dict[str, str] = {}
    async with served(meta) as client:

        async def call(city: str) -> None:
            result = await client.call_tool("weather", task("Current weather", city))
            summaries[city] = whole(result)["summary"]

        async with anyio.create_task_group() as group:
            for city in ("Berlin", "Madrid", "Tokyo"):
                group.start_soon(call, city)

    assert summaries == {
        "Berlin": "Berlin: 9 °C, overcast.",
        "Madrid": "Madrid: 21 °C, clear.",
        "Tokyo": "Tokyo: 15 °C, windy.",
    }
    assert len(model.requests) == 6
    assert sorted(toolbox.ran, key=str) == [
        ("get_weather", {"city": city}) for city in ("Berlin", "Madrid", "Tokyo")
    ]
