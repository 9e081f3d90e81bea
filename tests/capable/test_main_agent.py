"""A capable model does the right thing as the main agent (`MainAgent.ask`) and in the
categories it calls. The user gets the main model's answer, with no extra model call,
no extra tool or category run, and every call it made run as written."""

from __future__ import annotations

import pytest

from meta_tools.agent import INSTRUCTIONS
from meta_tools.llm import ScriptedModel
from tests.capable.conftest import (
    TODAY,
    Toolbox,
    agent,
    answer,
    calls,
    categories_asked,
    in_any_order,
    router,
    task,
    used_up,
)

pytestmark = pytest.mark.anyio


def one_call(tool: str, arguments: dict[str, object], said: str) -> ScriptedModel:
    """A category's model: one tool call, then its answer."""
    return ScriptedModel([calls((tool, arguments)), answer(said)])


# -- answers written the model's own way ----------------------------------------------------
async def test_a_balance_with_its_thousands_separator_and_currency_is_the_answer(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    finance = one_call("get_balance", {"account": "checking"}, "Checking: 1,234.56 EUR.")
    main = ScriptedModel(
        [
            calls(("finance", task("Balance of the checking account", "checking"))),
            answer("Your balance is 1,234.56 EUR."),
        ]
    )
    meta = router(toolbox, {"Finance": finance}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("What's my checking balance?")

    assert reply == "Your balance is 1,234.56 EUR."
    used_up(main, 2)
    used_up(finance, 2)
    assert categories_asked(meta) == {"Finance": 2}
    assert toolbox.ran == [("get_balance", {"account": "checking"})]


async def test_a_help_text_that_names_a_tool_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    help_text = (
        "I can check the weather with the `weather` tool, read and search your project"
        " files, send emails and chat messages, and follow your CI builds."
    )
    main = ScriptedModel([answer(help_text)])
    meta = router(toolbox, {}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("What can you do?")

    assert reply == help_text
    used_up(main, 1)
    assert categories_asked(meta) == {}
    assert toolbox.ran == []


async def test_a_clarifying_question_that_names_a_category_is_the_answer(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    question = "Should I use messaging to email Anna or to text her? And what is her address?"
    main = ScriptedModel([answer(question)])
    meta = router(toolbox, {}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("Send Anna the notes.")

    assert reply == question
    used_up(main, 1)
    assert categories_asked(meta) == {}
    assert toolbox.ran == []


CODE_EXAMPLE = """Pass them as `tools` to `chat.completions.create`:

```python
tools=[{"type": "function", "function": {"name": "weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}, {"type": "function", "function": {"name": "finance", "parameters": {"type": "object", "properties": {}}}}]
client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
```"""


async def test_a_code_example_with_tool_json_is_the_answer_and_stays_whole_in_history(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    main = ScriptedModel([answer(CODE_EXAMPLE), answer("You're welcome!")])
    meta = router(toolbox, {}, profile=profile)
    friday = agent(main, meta, profile=profile)

    assert await friday.ask("How do I give the OpenAI API two tools, weather and finance?") == (
        CODE_EXAMPLE
    )
    assert await friday.ask("Thanks!") == "You're welcome!"
    used_up(main, 2)
    history = [(m.role, m.content) for m in main.requests[1].messages[1:]]
    assert history == [
        ("user", "How do I give the OpenAI API two tools, weather and finance?"),
        ("assistant", CODE_EXAMPLE),
        ("user", "Thanks!"),
    ]
    assert categories_asked(meta) == {}
    assert toolbox.ran == []


TOOL_RESPONSE_EXPLAINED = (
    "Qwen's chat template wraps each tool message in a user turn, like this:\n\n"
    '<tool_response>\n{"temperature": 21}\n</tool_response>'
)
TOOL_RESPONSE_BLOCK = '<tool_response>\n{"temperature": 21, "city": "Madrid"}\n</tool_response>'


async def test_an_explanation_of_how_a_tool_s_result_is_shown_is_the_answer(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    main = ScriptedModel([answer(TOOL_RESPONSE_EXPLAINED)])
    meta = router(toolbox, {}, profile=profile)
    question = "How does Qwen see a tool's result? Show me an example."
    assert await agent(main, meta, profile=profile).ask(question) == TOOL_RESPONSE_EXPLAINED
    used_up(main, 1)
    assert categories_asked(meta) == {} and toolbox.ran == []


async def test_a_tool_response_block_the_user_asked_for_is_the_answer(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    main = ScriptedModel([answer(TOOL_RESPONSE_BLOCK)])
    meta = router(toolbox, {}, profile=profile)
    question = (
        "Write a sample Qwen tool response for a weather tool, Madrid at 21 degrees."
        " Only the block, nothing else."
    )
    assert await agent(main, meta, profile=profile).ask(question) == TOOL_RESPONSE_BLOCK
    used_up(main, 1)
    assert categories_asked(meta) == {} and toolbox.ran == []


async def test_a_one_word_answer_naming_a_category_is_the_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    main = ScriptedModel([answer("Weather.")])
    meta = router(toolbox, {}, profile=profile)
    question = "Which of your categories tells me whether I need an umbrella? One word."
    reply = await agent(main, meta, profile=profile).ask(question)

    assert reply == "Weather."
    used_up(main, 1)
    assert categories_asked(meta) == {}
    assert toolbox.ran == []


# -- the user's own values ------------------------------------------------------------------
async def test_a_weight_written_with_its_unit_glued_on_is_passed_as_written(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    quote = {"weight_kg": 3.5, "destination": "Lyon"}
    shipping = one_call("shipping_quote", quote, "A 3.5 kg parcel to Lyon costs 14.90 EUR.")
    main = ScriptedModel(
        [
            calls(("shipping", task("Price to ship a parcel", "3.5kg parcel to Lyon"))),
            answer("Shipping your 3.5kg parcel to Lyon costs 14.90 EUR."),
        ]
    )
    meta = router(toolbox, {"Shipping": shipping}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("How much to ship a 3.5kg parcel to Lyon?")

    assert reply == "Shipping your 3.5kg parcel to Lyon costs 14.90 EUR."
    used_up(main, 2)
    used_up(shipping, 2)
    assert toolbox.ran == [("shipping_quote", quote)]


async def test_an_amount_in_millions_written_as_4_2m_is_passed_as_written(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    conversion = {"amount": 4200000.0, "from_currency": "USD", "to_currency": "EUR"}
    finance = one_call("convert_currency", conversion, "4.2M USD is 3,864,000 EUR.")
    main = ScriptedModel(
        [
            calls(("finance", task("Convert dollars to euros", "4.2M USD to EUR"))),
            answer("4.2M USD is 3,864,000 EUR."),
        ]
    )
    meta = router(toolbox, {"Finance": finance}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("Convert 4.2M USD to EUR")

    assert reply == "4.2M USD is 3,864,000 EUR."
    used_up(main, 2)
    used_up(finance, 2)
    assert toolbox.ran == [("convert_currency", conversion)]


async def test_hours_written_as_2_5h_are_passed_as_written(profile: str | None) -> None:
    toolbox = Toolbox()
    conversion = {"value": 2.5, "from_unit": "h", "to_unit": "min"}
    units = one_call("convert_units", conversion, "2.5 h is 150 min.")
    main = ScriptedModel(
        [
            calls(("units", task("Convert hours to minutes", "2.5h"))),
            answer("2.5h is 150 minutes."),
        ]
    )
    meta = router(toolbox, {"Units": units}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("How many minutes is 2.5h?")

    assert reply == "2.5h is 150 minutes."
    used_up(main, 2)
    used_up(units, 2)
    assert toolbox.ran == [("convert_units", conversion)]


async def test_a_marathon_s_length_the_model_knows_is_converted(profile: str | None) -> None:
    toolbox = Toolbox()
    conversion = {"value": 42.195, "from_unit": "km", "to_unit": "mi"}
    units = one_call("convert_units", conversion, "42.195 km is 26.219 mi.")
    main = ScriptedModel(
        [
            calls(("units", task("Convert kilometres to miles", "42.195 km"))),
            answer("A marathon, 42.195 km, is 26.219 miles."),
        ]
    )
    meta = router(toolbox, {"Units": units}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("How many miles is a marathon?")

    assert reply == "A marathon, 42.195 km, is 26.219 miles."
    used_up(main, 2)
    used_up(units, 2)
    assert toolbox.ran == [("convert_units", conversion)]


async def test_a_date_worked_out_from_today_in_the_instructions_is_passed_on(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    dates = one_call("describe_date", {"date": "2026-03-21"}, "2026-03-21 is a Saturday.")
    main = ScriptedModel(
        [
            calls(("dates", task("Weekday of a date", "2026-03-21"))),
            answer("A week from today, 2026-03-21, is a Saturday."),
        ]
    )
    meta = router(toolbox, {"Dates": dates}, profile=profile)
    instructions = f"{INSTRUCTIONS}\nToday is {TODAY}."
    friday = agent(main, meta, instructions=instructions, profile=profile)
    reply = await friday.ask("What weekday is it a week from today?")

    assert reply == "A week from today, 2026-03-21, is a Saturday."
    used_up(main, 2)
    used_up(dates, 2)
    assert toolbox.ran == [("describe_date", {"date": "2026-03-21"})]


# -- actions and polls ----------------------------------------------------------------------
async def test_a_build_polled_in_two_rounds_gives_the_user_its_new_state(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    poll = ("build_status", {"build_id": "b-1042"})
    builds = ScriptedModel(
        [
            calls(poll),
            answer("Build b-1042 is running (60%)."),
            calls(poll),
            answer("Build b-1042 passed."),
        ]
    )
    status = ("builds", task("Status of a CI build", "b-1042"))
    main = ScriptedModel([calls(status), calls(status), answer("Build b-1042 passed.")])
    meta = router(toolbox, {"Builds": builds}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "Is build b-1042 done? If it is still running, check once more."
    )

    assert reply == "Build b-1042 passed."
    used_up(main, 3)
    used_up(builds, 4)
    assert toolbox.ran == [poll, poll]
    results = [m.content or "" for m in main.requests[2].messages if m.role == "tool"]
    assert ['"state":"running"' in r for r in results] == [True, False]
    assert ['"state":"passed"' in r for r in results] == [False, True]


EMAIL = {"to": "bob@example.com", "subject": "Port", "body": "Hi Bob, the server listens on 8080."}


async def test_two_categories_in_sequence_read_the_port_then_email_it(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    files = one_call("read_file", {"path": "config.ini"}, "config.ini sets port 8080.")
    messaging = one_call("send_email", EMAIL, "Emailed bob@example.com.")
    main = ScriptedModel(
        [
            calls(("files", task("Port set in config.ini", "config.ini"))),
            calls(("messaging", task("Email Bob the port", "bob@example.com: port 8080"))),
            answer("I emailed Bob that the server listens on port 8080."),
        ]
    )
    meta = router(toolbox, {"Files": files, "Messaging": messaging}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "Email bob@example.com the port set in config.ini"
    )

    assert reply == "I emailed Bob that the server listens on port 8080."
    used_up(main, 3)
    used_up(files, 2)
    used_up(messaging, 2)
    assert toolbox.ran == [("read_file", {"path": "config.ini"}), ("send_email", EMAIL)]


async def test_a_sent_email_is_not_sent_again_by_another_category(profile: str | None) -> None:
    toolbox = Toolbox()
    email = {"to": "bob@example.com", "subject": "Lunch", "body": "Lunch at noon?"}
    messaging = one_call("send_email", email, "Sent the email to bob@example.com.")
    main = ScriptedModel(
        [
            calls(("messaging", task("Email Bob", "bob@example.com: Lunch at noon?"))),
            answer("Done: I emailed Bob about lunch at noon."),
        ]
    )
    meta = router(toolbox, {"Messaging": messaging}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("Email bob@example.com: Lunch at noon?")

    assert reply == "Done: I emailed Bob about lunch at noon."
    used_up(main, 2)
    used_up(messaging, 2)
    assert categories_asked(meta) == {"Messaging": 2}
    assert toolbox.ran == [("send_email", email)]
    told = main.requests[1].messages[-1].content or ""
    assert '"tool":"send_email"' in told and '"status":"success"' in told


# -- parallel calls -------------------------------------------------------------------------
async def test_five_categories_called_in_one_reply_all_run(profile: str | None) -> None:
    toolbox = Toolbox()
    models = {
        "Weather": one_call("get_weather", {"city": "Paris"}, "Paris: 18 °C, light rain."),
        "Finance": one_call("get_balance", {"account": "checking"}, "Checking: 1,234.56 EUR."),
        "Dates": one_call("describe_date", {"date": TODAY}, f"{TODAY} is a Saturday."),
        "Builds": one_call("build_status", {"build_id": "b-1042"}, "b-1042 is running (60%)."),
        "Files": one_call("search_files", {"pattern": "TODO"}, "One TODO: src/app.py line 12."),
    }
    main = ScriptedModel(
        [
            calls(
                ("weather", task("Current weather", "Paris")),
                ("finance", task("Account balance", "checking")),
                ("dates", task("Weekday of a date", TODAY)),
                ("builds", task("Build status", "b-1042")),
                ("files", task("Find TODO comments", "TODO")),
            ),
            answer(
                "Saturday: Paris 18 °C with light rain; checking 1,234.56 EUR;"
                " build b-1042 60% done; one TODO in src/app.py."
            ),
        ]
    )
    meta = router(toolbox, models, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        f"Morning briefing for {TODAY}: weather in Paris, my checking balance, the weekday,"
        " build b-1042 and the TODOs in the code."
    )

    assert reply == (
        "Saturday: Paris 18 °C with light rain; checking 1,234.56 EUR;"
        " build b-1042 60% done; one TODO in src/app.py."
    )
    used_up(main, 2)
    for model in models.values():
        used_up(model, 2)
    assert in_any_order(toolbox.ran) == in_any_order(
        [
            ("get_weather", {"city": "Paris"}),
            ("get_balance", {"account": "checking"}),
            ("describe_date", {"date": TODAY}),
            ("build_status", {"build_id": "b-1042"}),
            ("search_files", {"pattern": "TODO"}),
        ]
    )


async def test_two_categories_called_in_one_reply_both_answer(profile: str | None) -> None:
    toolbox = Toolbox()
    weather = one_call("get_weather", {"city": "Berlin"}, "Berlin: 9 °C, overcast.")
    finance = one_call("get_balance", {"account": "savings"}, "Savings: 1,234.56 EUR.")
    main = ScriptedModel(
        [
            calls(
                ("weather", task("Current weather", "Berlin")),
                ("finance", task("Account balance", "savings")),
            ),
            answer("Berlin is 9 °C and overcast; your savings hold 1,234.56 EUR."),
        ]
    )
    meta = router(toolbox, {"Weather": weather, "Finance": finance}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "Weather in Berlin, and how much is in my savings?"
    )

    assert reply == "Berlin is 9 °C and overcast; your savings hold 1,234.56 EUR."
    used_up(main, 2)
    used_up(weather, 2)
    used_up(finance, 2)
    assert in_any_order(toolbox.ran) == in_any_order(
        [("get_weather", {"city": "Berlin"}), ("get_balance", {"account": "savings"})]
    )


# -- ordinary conversations -----------------------------------------------------------------
async def test_one_category_answers_the_weather_in_madrid(profile: str | None) -> None:
    toolbox = Toolbox()
    weather = one_call("get_weather", {"city": "Madrid"}, "Madrid: 21 °C, clear.")
    main = ScriptedModel(
        [
            calls(("weather", task("Current weather", "Madrid"))),
            answer("It's 21 °C and clear in Madrid."),
        ]
    )
    meta = router(toolbox, {"Weather": weather}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("What's the weather in Madrid?")

    assert reply == "It's 21 °C and clear in Madrid."
    used_up(main, 2)
    used_up(weather, 2)
    assert categories_asked(meta) == {"Weather": 2}
    assert toolbox.ran == [("get_weather", {"city": "Madrid"})]


async def test_a_failed_news_search_falls_back_to_the_web(profile: str | None) -> None:
    toolbox = Toolbox()
    search = ScriptedModel(
        [
            calls(("search_news", {"query": "Python release"})),
            calls(("web_search", {"query": "latest Python release"})),
            answer("Python 3.13.0, released on October 7, 2024."),
        ]
    )
    main = ScriptedModel(
        [
            calls(("search", task("Latest Python release", "Python"))),
            answer("The latest release is Python 3.13.0 (October 7, 2024)."),
        ]
    )
    meta = router(toolbox, {"Search": search}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("What's the latest Python release?")

    assert reply == "The latest release is Python 3.13.0 (October 7, 2024)."
    used_up(main, 2)
    used_up(search, 3)
    assert toolbox.ran == [
        ("search_news", {"query": "Python release"}),
        ("web_search", {"query": "latest Python release"}),
    ]


async def test_a_missing_phone_number_is_asked_of_the_user(profile: str | None) -> None:
    toolbox = Toolbox()
    question = "What is your landlord's phone number?"
    messaging = ScriptedModel(
        [calls(("request_input", {"missing": ["phone number"], "question": question}))]
    )
    main = ScriptedModel(
        [
            calls(("messaging", task("Text the landlord", "The rent will be late this month."))),
            answer(question),
        ]
    )
    meta = router(toolbox, {"Messaging": messaging}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "Text my landlord that the rent will be late this month."
    )

    assert reply == question
    used_up(main, 2)
    used_up(messaging, 1)
    assert toolbox.ran == []


async def test_a_request_no_category_fits_is_declined_without_a_call(
    profile: str | None,
) -> None:
    toolbox = Toolbox()
    main = ScriptedModel([answer("Sorry, I can't order food: none of my tools does that.")])
    meta = router(toolbox, {}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("Order me a pizza margherita.")

    assert reply == "Sorry, I can't order food: none of my tools does that."
    used_up(main, 1)
    assert categories_asked(meta) == {}
    assert toolbox.ran == []


async def test_a_python_expression_is_run_by_the_code_category(profile: str | None) -> None:
    toolbox = Toolbox()
    code = one_call("run_python", {"code": "2 ** 10"}, "2 ** 10 = 1024")
    main = ScriptedModel(
        [calls(("code", task("Evaluate a Python expression", "2 ** 10"))), answer("2**10 is 1024.")]
    )
    meta = router(toolbox, {"Code": code}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("What is 2 ** 10 in Python?")

    assert reply == "2**10 is 1024."
    used_up(main, 2)
    used_up(code, 2)
    assert toolbox.ran == [("run_python", {"code": "2 ** 10"})]


# -- users writing in German, Spanish and Chinese -------------------------------------------
async def test_a_german_user_gets_the_weather_in_german(profile: str | None) -> None:
    toolbox = Toolbox()
    weather = one_call("get_weather", {"city": "Berlin"}, "Berlin: 9 °C, overcast.")
    main = ScriptedModel(
        [
            calls(("weather", task("Aktuelles Wetter", "Berlin"))),
            answer("In Berlin sind es 9 °C, bedeckt."),
        ]
    )
    meta = router(toolbox, {"Weather": weather}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("Wie ist das Wetter in Berlin?")

    assert reply == "In Berlin sind es 9 °C, bedeckt."
    used_up(main, 2)
    used_up(weather, 2)
    assert toolbox.ran == [("get_weather", {"city": "Berlin"})]


async def test_a_german_user_gets_a_total_with_a_decimal_comma(profile: str | None) -> None:
    toolbox = Toolbox()
    february = {"account": "checking", "month": "2026-02"}
    finance = one_call("list_transactions", february, "Three payments: 120.40, 310.15, 418.00 USD.")
    main = ScriptedModel(
        [
            calls(("finance", task("Kartenausgaben im Februar 2026", "Girokonto, 2026-02"))),
            answer("Im Februar hast du 848,55 $ ausgegeben."),
        ]
    )
    meta = router(toolbox, {"Finance": finance}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "Wie viel habe ich im Februar 2026 mit der Karte vom Girokonto ausgegeben?"
    )

    assert reply == "Im Februar hast du 848,55 $ ausgegeben."
    used_up(main, 2)
    used_up(finance, 2)
    assert toolbox.ran == [("list_transactions", february)]


async def test_a_spanish_user_gets_the_weekday_in_spanish(profile: str | None) -> None:
    toolbox = Toolbox()
    dates = one_call("describe_date", {"date": "2026-05-01"}, "2026-05-01 is a Friday.")
    main = ScriptedModel(
        [
            calls(("dates", task("Día de la semana de una fecha", "2026-05-01"))),
            answer("El 1 de mayo de 2026 es viernes."),
        ]
    )
    meta = router(toolbox, {"Dates": dates}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask(
        "¿Qué día de la semana es el 1 de mayo de 2026?"
    )

    assert reply == "El 1 de mayo de 2026 es viernes."
    used_up(main, 2)
    used_up(dates, 2)
    assert toolbox.ran == [("describe_date", {"date": "2026-05-01"})]


async def test_a_chinese_user_gets_the_balance_in_chinese(profile: str | None) -> None:
    toolbox = Toolbox()
    finance = one_call("get_balance", {"account": "checking"}, "Checking: 1,234.56 EUR.")
    main = ScriptedModel(
        [
            calls(("finance", task("查询支票账户余额", "支票账户 (checking)"))),
            answer("您的支票账户余额为1,234.56欧元。"),
        ]
    )
    meta = router(toolbox, {"Finance": finance}, profile=profile)
    reply = await agent(main, meta, profile=profile).ask("我的支票账户余额是多少？")

    assert reply == "您的支票账户余额为1,234.56欧元。"
    used_up(main, 2)
    used_up(finance, 2)
    assert toolbox.ran == [("get_balance", {"account": "checking"})]
