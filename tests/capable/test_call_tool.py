"""A capable model does the right thing in a category, called as an MCP host would:
`MetaManager.call_tool`. The user gets the model's answer, with no extra model call,
no extra tool or category run, and every call it made run as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_tools import CategoryManager
from meta_tools.llm import ScriptedModel
from tests.capable.conftest import (
    TODAY,
    Toolbox,
    answer,
    calls,
    categories_asked,
    executions,
    guarded,
    in_any_order,
    router,
    router_from_config,
    task,
    used_up,
)

pytestmark = pytest.mark.anyio

WEATHER_IN_PARIS = {"city": "Paris", "temperature_c": 18, "conditions": "light rain"}


# -- values the model rightly knows ---------------------------------------------------------
async def test_the_weather_in_the_capital_of_france_is_looked_up_for_paris(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("get_weather", {"city": "Paris"})),
            answer("In Paris it is 18 °C with light rain."),
        ]
    )
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    question = task("What's the weather in the capital of France?", "the capital of France")
    result = await meta.call_tool("weather", question)

    assert (result.category, result.status, result.summary) == (
        "Weather",
        "success",
        "In Paris it is 18 °C with light rain.",
    )
    used_up(model, 2)
    assert toolbox.ran == [("get_weather", {"city": "Paris"})]
    assert executions(result) == [("get_weather", {"city": "Paris"}, True)]
    assert result.declined is None


async def test_a_city_written_in_chinese_is_looked_up_by_its_english_name(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [calls(("get_weather", {"city": "Shanghai"})), answer("上海现在24°C，晴天。")]
    )
    meta = router(toolbox, {"Weather": model}, profile=profile)
    result = await meta.call_tool("weather", task("查询上海现在的天气", "上海"))

    assert (result.status, result.summary) == ("success", "上海现在24°C，晴天。")
    used_up(model, 2)
    assert toolbox.ran == [("get_weather", {"city": "Shanghai"})]
    assert result.declined is None


async def test_the_weekday_of_the_apollo_11_landing_comes_from_the_date_the_model_knows(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("describe_date", {"date": "1969-07-20"})),
            answer("Apollo 11 landed on the Moon on Sunday, 20 July 1969."),
        ]
    )
    meta = router(toolbox, {"Dates": model}, profile=profile)
    objective = "Weekday of the Apollo 11 Moon landing"
    result = await meta.call_tool("dates", task(objective, "Apollo 11 Moon landing"))

    assert (result.status, result.summary) == (
        "success",
        "Apollo 11 landed on the Moon on Sunday, 20 July 1969.",
    )
    used_up(model, 2)
    assert toolbox.ran == [("describe_date", {"date": "1969-07-20"})]


async def test_tomorrow_is_worked_out_from_the_date_the_category_notes_give(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("shift_date", {"date": TODAY, "days": 1})),
            answer("Tomorrow is Sunday, 2026-03-15."),
        ]
    )
    meta = router(toolbox, {"Dates": model}, profile=profile)
    result = await meta.call_tool("dates", task("Which weekday is tomorrow", "tomorrow"))

    assert (result.status, result.summary) == ("success", "Tomorrow is Sunday, 2026-03-15.")
    assert TODAY in (model.requests[0].messages[0].content or "")  # told in the system prompt
    used_up(model, 2)
    assert toolbox.ran == [("shift_date", {"date": TODAY, "days": 1})]


# -- content the model chooses --------------------------------------------------------------
JOKE = "Why do programmers prefer dark mode? Because light attracts bugs."


async def test_a_joke_the_model_writes_is_posted_and_the_result_says_so(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("post_message", {"channel": "general", "text": JOKE})),
            answer("Posted the joke to #general."),
        ]
    )
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    result = await meta.call_tool(
        "messaging", task("Tell a short joke in our team chat", "team chat #general")
    )

    assert (result.status, result.summary) == ("success", "Posted the joke to #general.")
    used_up(model, 2)
    assert toolbox.ran == [("post_message", {"channel": "general", "text": JOKE})]
    assert executions(result) == [("post_message", {"channel": "general", "text": JOKE}, True)]


async def test_an_echo_with_words_the_model_chose_checks_the_connection(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("echo", {"message": "still here"})),
            answer('The connection works: echo answered "still here".'),
        ]
    )
    meta = router(toolbox, {"Utility": model}, profile=profile)
    result = await meta.call_tool("utility", task("Check that the tools respond", "ping"))

    assert (result.status, result.summary) == (
        "success",
        'The connection works: echo answered "still here".',
    )
    used_up(model, 2)
    assert toolbox.ran == [("echo", {"message": "still here"})]


async def test_a_wait_of_a_few_seconds_the_model_picks_runs(profile: str | None) -> None:
    toolbox = Toolbox()
    model = ScriptedModel([calls(("wait", {"seconds": 5})), answer("Waited 5 seconds.")])
    meta = router(toolbox, {"Builds": model}, profile=profile)
    result = await meta.call_tool("builds", task("Pause briefly", "a few seconds"))

    assert (result.status, result.summary) == ("success", "Waited 5 seconds.")
    used_up(model, 2)
    assert toolbox.ran == [("wait", {"seconds": 5})]


# -- numbers the model derives and writes its own way ---------------------------------------
FEBRUARY = {"account": "checking", "month": "2026-02"}


async def test_a_terse_total_the_model_adds_up_is_the_answer(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel([calls(("list_transactions", FEBRUARY)), answer("$848.55")])
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    result = await meta.call_tool(
        "finance", task("Total card spending in February 2026", "checking account, 2026-02")
    )

    assert (result.status, result.summary) == ("success", "$848.55")
    used_up(model, 2)
    assert toolbox.ran == [("list_transactions", FEBRUARY)]


async def test_revenue_written_in_millions_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("get_revenue", {"quarter": "Q2", "year": 2026})),
            answer("Q2 revenue: $4.82 million"),
        ]
    )
    meta = router(toolbox, {"Finance": model}, profile=profile)
    result = await meta.call_tool("finance", task("Revenue of the second quarter", "Q2 2026"))

    assert (result.status, result.summary) == ("success", "Q2 revenue: $4.82 million")
    used_up(model, 2)
    assert toolbox.ran == [("get_revenue", {"quarter": "Q2", "year": 2026})]


async def test_an_average_written_in_chinese_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    numbers = [12.0, 15.0, 20.0, 9.0]
    model = ScriptedModel(
        [calls(("average", {"numbers": numbers})), answer("这四个数的平均值是14。")]
    )
    meta = router(toolbox, {"Units": model}, profile=profile)
    result = await meta.call_tool("units", task("计算这些数的平均值", "12、15、20、9"))

    assert (result.status, result.summary) == ("success", "这四个数的平均值是14。")
    used_up(model, 2)
    assert toolbox.ran == [("average", {"numbers": numbers})]


async def test_an_average_written_in_english_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    numbers = [12.0, 15.0, 20.0, 9.0]
    model = ScriptedModel(
        [calls(("average", {"numbers": numbers})), answer("The average of the four is 14.")]
    )
    meta = router(toolbox, {"Units": model}, profile=profile)
    result = await meta.call_tool("units", task("Average of these numbers", "12, 15, 20, 9"))

    assert (result.status, result.summary) == ("success", "The average of the four is 14.")
    used_up(model, 2)
    assert toolbox.ran == [("average", {"numbers": numbers})]


async def test_a_balance_written_with_a_thousands_separator_is_the_answer(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [calls(("get_balance", {"account": "checking"})), answer("The balance is 1,234.56")]
    )
    meta = router(toolbox, {"Finance": model}, profile=profile)
    result = await meta.call_tool("finance", task("Balance of my checking account", "checking"))

    assert (result.status, result.summary) == ("success", "The balance is 1,234.56")
    used_up(model, 2)
    assert toolbox.ran == [("get_balance", {"account": "checking"})]


async def test_a_german_total_with_a_decimal_comma_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    model = ScriptedModel([calls(("list_transactions", FEBRUARY)), answer("Summe: 848,55 $")])
    meta = router(toolbox, {"Finance": model}, profile=profile)
    result = await meta.call_tool(
        "finance",
        task("Summe meiner Kartenausgaben im Februar 2026", "Girokonto (checking), 2026-02"),
    )

    assert (result.status, result.summary) == ("success", "Summe: 848,55 $")
    used_up(model, 2)
    assert toolbox.ran == [("list_transactions", FEBRUARY)]


async def test_a_spanish_conversion_is_answered_in_spanish(profile: str | None) -> None:
    toolbox = Toolbox()
    arguments = {"amount": 250.0, "from_currency": "USD", "to_currency": "EUR"}
    model = ScriptedModel(
        [calls(("convert_currency", arguments)), answer("250 dólares son 230 euros.")]
    )
    meta = router(toolbox, {"Finance": model}, profile=profile)
    result = await meta.call_tool(
        "finance", task("Convertir 250 dólares a euros", "250 dólares estadounidenses a euros")
    )

    assert (result.status, result.summary) == ("success", "250 dólares son 230 euros.")
    used_up(model, 2)
    assert toolbox.ran == [("convert_currency", arguments)]


# -- actions and polls ----------------------------------------------------------------------
EMAIL = {
    "to": "bob@example.com",
    "subject": "Meeting moved",
    "body": "Hi Bob, the meeting moved to 3 pm.",
}


async def test_a_sent_email_is_reported_once_and_stays_in_the_result(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("send_email", EMAIL)),
            answer("Emailed bob@example.com: the meeting moved to 3 pm."),
        ]
    )
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    result = await meta.call_tool(
        "messaging",
        task("Email Bob that the meeting moved to 3 pm", "bob@example.com; meeting moved to 3 pm"),
    )

    assert (result.category, result.status, result.summary, result.declined) == (
        "Messaging",
        "success",
        "Emailed bob@example.com: the meeting moved to 3 pm.",
        None,
    )
    used_up(model, 2)
    assert toolbox.ran == [("send_email", EMAIL)]
    assert executions(result) == [("send_email", EMAIL, True)]
    assert "found nothing" not in (model.requests[1].messages[-1].content or "")


async def test_a_build_polled_in_two_rounds_reports_its_new_state(profile: str | None) -> None:
    toolbox = Toolbox()
    poll = ("build_status", {"build_id": "b-1042"})
    model = ScriptedModel([calls(poll), calls(poll), answer("Build b-1042 passed.")])
    meta = router(toolbox, {"Builds": model}, profile=profile)
    result = await meta.call_tool("builds", task("Report when build b-1042 is done", "b-1042"))

    assert (result.status, result.summary) == ("success", "Build b-1042 passed.")
    used_up(model, 3)
    assert toolbox.ran == [poll, poll]
    assert [e.result for e in result.executions] == [
        '{"build": "b-1042", "state": "running", "progress": 60}',
        '{"build": "b-1042", "state": "passed", "progress": 100}',
    ]


async def test_a_build_is_polled_again_after_a_wait(profile: str | None) -> None:
    toolbox = Toolbox()
    poll = ("build_status", {"build_id": "b-1042"})
    pause = ("wait", {"seconds": 30})
    model = ScriptedModel(
        [calls(poll), calls(pause), calls(poll), answer("Build b-1042 passed after about 30 s.")]
    )
    meta = router(toolbox, {"Builds": model}, profile=profile)
    result = await meta.call_tool("builds", task("Wait for build b-1042 to finish", "b-1042"))

    assert (result.status, result.summary) == ("success", "Build b-1042 passed after about 30 s.")
    used_up(model, 4)
    assert toolbox.ran == [poll, pause, poll]


# -- ordinary conversations -----------------------------------------------------------------
async def test_one_tool_reads_the_port_from_the_config_file(
    tmp_path: Path, profile: str | None
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [calls(("read_file", {"path": "config.ini"})), answer("config.ini sets port 8080.")]
    )
    meta = router_from_config(tmp_path, toolbox, model, profile=profile)
    result = await meta.call_tool("files", task("Port set in config.ini", "config.ini"))

    assert (result.status, result.summary) == ("success", "config.ini sets port 8080.")
    used_up(model, 2)
    assert toolbox.ran == [("read_file", {"path": "config.ini"})]


async def test_two_tools_in_sequence_find_the_config_file_then_read_it(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("list_files", {"folder": "."})),
            calls(("read_file", {"path": "config.ini"})),
            answer("The config file is config.ini; it sets host 0.0.0.0 and port 8080."),
        ]
    )
    meta = router(toolbox, {"Files": model}, profile=profile)
    result = await meta.call_tool(
        "files", task("Find the project's config file and say what it sets", "the config file")
    )

    assert (result.status, result.summary) == (
        "success",
        "The config file is config.ini; it sets host 0.0.0.0 and port 8080.",
    )
    used_up(model, 3)
    assert toolbox.ran == [("list_files", {"folder": "."}), ("read_file", {"path": "config.ini"})]


async def test_the_weather_of_three_cities_is_looked_up_in_parallel(profile: str | None) -> None:
    toolbox = Toolbox()
    cities = [("get_weather", {"city": city}) for city in ("Berlin", "Madrid", "Tokyo")]
    model = ScriptedModel(
        [calls(*cities), answer("Berlin 9 °C overcast, Madrid 21 °C clear, Tokyo 15 °C windy.")]
    )
    meta = router(toolbox, {"Weather": model}, profile=profile)
    result = await meta.call_tool(
        "weather", task("Current weather in three cities", "Berlin, Madrid, Tokyo")
    )

    assert (result.status, result.summary) == (
        "success",
        "Berlin 9 °C overcast, Madrid 21 °C clear, Tokyo 15 °C windy.",
    )
    used_up(model, 2)
    assert in_any_order(toolbox.ran) == in_any_order(cities)
    assert [(e.tool, e.arguments) for e in result.executions] == cities


async def test_a_failed_news_search_falls_back_to_the_web_search(profile: str | None) -> None:
    toolbox = Toolbox()
    model = ScriptedModel(
        [
            calls(("search_news", {"query": "Python release"})),
            calls(("web_search", {"query": "latest Python release"})),
            answer("Python 3.13.0 was released on October 7, 2024."),
        ]
    )
    meta = router(toolbox, {"Search": model}, profile=profile)
    result = await meta.call_tool("search", task("Latest Python release", "Python"))

    assert (result.status, result.summary) == (
        "success",
        "Python 3.13.0 was released on October 7, 2024.",
    )
    used_up(model, 3)
    assert toolbox.ran == [
        ("search_news", {"query": "Python release"}),
        ("web_search", {"query": "latest Python release"}),
    ]
    assert [e.ok for e in result.executions] == [False, True]


async def test_a_text_message_without_a_number_asks_for_it(profile: str | None) -> None:
    toolbox = Toolbox()
    question = "What is your landlord's phone number?"
    model = ScriptedModel(
        [
            calls(
                ("request_input", {"missing": ["landlord's phone number"], "question": question})
            ),
        ]
    )
    meta = router(toolbox, {"Messaging": model}, profile=profile)
    result = await meta.call_tool(
        "messaging", task("Text my landlord that the rent will be late", "rent will be late")
    )

    assert (result.status, result.summary, result.question, result.missing) == (
        "insufficient_input",
        question,
        question,
        ["landlord's phone number"],
    )
    used_up(model, 1)
    assert toolbox.ran == []


async def test_a_category_that_has_no_tool_for_the_task_declines(profile: str | None) -> None:
    toolbox = Toolbox()
    reason = "Weather tools cannot order food."
    model = ScriptedModel([calls(("decline", {"reason": reason}))])
    meta = router(toolbox, {"Weather": model}, profile=profile)
    result = await meta.call_tool("weather", task("Order a pizza margherita", "pizza margherita"))

    assert (result.status, result.summary, result.declined) == ("no_suitable_tool", reason, None)
    used_up(model, 1)
    assert categories_asked(meta) == {"Weather": 1}
    assert toolbox.ran == []


async def test_a_decline_from_the_category_the_host_chose_is_the_result(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    reason = "Weather tools cannot book restaurants."
    model = ScriptedModel([calls(("decline", {"reason": reason}))])
    finance = ScriptedModel([calls(("decline", {"reason": "Not a finance task."}))])
    meta = router(toolbox, {"Weather": model, "Finance": finance}, profile=profile)
    result = await meta.call_tool(
        "weather", task("Book a table for two at Luigi's at 8 pm", "Luigi's, 8 pm, two people")
    )

    assert (result.status, result.summary, result.declined) == ("no_suitable_tool", reason, None)
    used_up(model, 1)
    assert categories_asked(meta) == {"Weather": 1}
    assert toolbox.ran == []


async def test_a_python_snippet_runs_and_its_value_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    code = "sorted([5, 3, 9, 1])"
    model = ScriptedModel([calls(("run_python", {"code": code})), answer("[1, 3, 5, 9]")])
    meta = router(toolbox, {"Code": model}, profile=profile)
    result = await meta.call_tool("code", task("Sort these numbers", "5, 3, 9, 1"))

    assert (result.status, result.summary) == ("success", "[1, 3, 5, 9]")
    used_up(model, 2)
    assert toolbox.ran == [("run_python", {"code": code})]


# -- a category of many tools ---------------------------------------------------------------
OFFICE = (
    "get_balance",
    "list_transactions",
    "get_revenue",
    "convert_currency",
    "list_files",
    "read_file",
    "search_files",
    "web_search",
    "search_news",
    "post_message",
    "send_email",
    "send_sms",
)


async def test_a_tool_whose_words_the_request_does_not_use_is_offered_and_runs(
    profile: str | None,
) -> None:
    """A user who put twelve tools in one category: "let everyone know" names none of
    `post_message`'s words, and a capable model knows it is the one."""
    toolbox = Toolbox()
    posted = {"channel": "general", "text": "Lunch is here!"}
    model = ScriptedModel(
        [calls(("post_message", posted)), answer("Posted to #general: Lunch is here!")]
    )
    office = CategoryManager(
        "Office", "Money, files, search and messages.", toolbox.tools(OFFICE), model,
        **guarded(profile),
    )  # fmt: skip
    question = "Let everyone in general know: Lunch is here!"
    result = await office.run(question, question)

    assert [t.name for t in model.requests[0].tools][: len(OFFICE)] == list(OFFICE)
    assert toolbox.ran == [("post_message", posted)]
    assert result.summary == "Posted to #general: Lunch is here!"
    used_up(model, 2)
