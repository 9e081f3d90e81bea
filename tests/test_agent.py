"""MainAgent: the main agent loop over a router's category tools, with a scripted model."""

from __future__ import annotations

import pytest

from meta_tools import tool
from meta_tools.agent import MainAgent
from meta_tools.category.manager import CategoryManager
from meta_tools.category.task import read_task
from meta_tools.demo.dates import describe_date
from meta_tools.demo.numbers import calculate
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.router.manager import MetaManager
from tests.guard_profiles import SMALL_EVERY_TURN

pytestmark = pytest.mark.anyio

#: What these tests check is what the guards do for a small model: every one runs.
SMALL = SMALL_EVERY_TURN
ANSWER_NOW = SMALL.text("repeat_rounds")
EACH_RESULT = SMALL.text("each_result")
MAX_NUDGES = SMALL.budgets["unread_call"]


def dates(model: ScriptedModel) -> MetaManager:
    category = CategoryManager(
        "Dates", "Weekdays and calendars.", [tool(describe_date)], model, guards=SMALL
    )
    return MetaManager([category], guards=SMALL)


def ask_dates(date: str) -> AssistantTurn:
    call = {"objective": "Weekday of the date", "exact_input": date}
    return AssistantTurn(tool_calls=[ToolCall(name="dates", arguments=call)])


def thursday_category(runs: int = 1) -> ScriptedModel:
    """The category's model: one `describe_date` call, then the answer; `runs` times."""
    call = ToolCall(name="describe_date", arguments={"date": "2025-12-25"})
    return ScriptedModel(
        [AssistantTurn(tool_calls=[call]), AssistantTurn(text="2025-12-25 is a Thursday.")] * runs
    )


async def test_an_empty_answer_after_category_calls_gives_the_user_what_they_found() -> None:
    """Seen with Qwen2.5-Coder 1.5B: after its rounds the main agent replied with nothing."""
    main = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text="  ")])
    category = thursday_category()
    answer = await MainAgent(main, dates(category)).ask("What weekday is 2025-12-25?")
    assert answer == "Dates: 2025-12-25 is a Thursday."


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        ("23", False),  # seen: no result nor the message holds it
        ("It is 23.", False),
        ("3", False),  # a number of the message only
        ("2025 and 12", True),  # numbers the call was given
        ("Thursday, in week 52", True),  # a number of the result (`iso_week`)
        ("A Thursday.", True),  # no number
        ("It is 23 days after my birthday, which I remember well.", True),  # not short
    ],
)
async def test_an_answer_whose_numbers_nothing_holds_gives_the_results_instead(
    reply: str, kept: bool
) -> None:
    """Seen with the 1.5B on demo x5: the result said 31 days and 744 hours, and the answer
    was "23" in one run, the message's "24" in another."""
    main = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text=reply)])
    agent = MainAgent(main, dates(thursday_category()))
    answer = await agent.ask("What weekday is 2025-12-25? Say it in 3 words.")
    assert answer == (reply if kept else "Dates: 2025-12-25 is a Thursday.")


async def test_an_empty_answer_without_any_category_call_stays_empty() -> None:
    main = ScriptedModel([AssistantTurn(text="")])
    answer = await MainAgent(main, dates(ScriptedModel([]))).ask("Hello?")
    assert answer == ""


async def test_a_category_call_that_already_succeeded_runs_again_and_the_model_is_told_to_answer() -> (
    None
):
    """Seen with the 1.5B model: the same category call, six rounds in a row, after success.
    A call made again in a later round runs again (a status may have changed)."""
    main = ScriptedModel(
        [ask_dates("2025-12-25"), ask_dates("2025-12-25"), AssistantTurn(text="A Thursday.")]
    )
    category = thursday_category(runs=2)
    answer = await MainAgent(main, dates(category)).ask("What weekday is 2025-12-25?")
    assert answer == "A Thursday."
    assert len(category.requests) == 4  # the category ran twice
    told = main.requests[2].messages
    assert told[-2].role == "tool" and "2025-12-25 is a Thursday." in told[-2].content
    assert (told[-1].role, told[-1].content) == ("user", ANSWER_NOW)


async def test_a_main_agent_that_only_repeats_ends_with_what_the_categories_found() -> None:
    main = ScriptedModel([ask_dates("2025-12-25")] * 3 + [AssistantTurn(text="never asked")])
    category = thursday_category(runs=3)
    answer = await MainAgent(main, dates(category)).ask("What weekday is 2025-12-25?")
    assert answer == "Dates: 2025-12-25 is a Thursday."
    assert len(main.requests) == 3 and len(category.requests) == 6  # each call ran


async def test_a_final_reply_that_is_still_an_unreadable_call_gives_what_categories_found() -> None:
    unreadable = AssistantTurn(text='<tool_call tool="dates" arguments={"objective": }>')
    main = RecoveringModel(ScriptedModel([ask_dates("2025-12-25"), *[unreadable] * 3]))
    answer = await MainAgent(main, dates(thursday_category())).ask("What weekday is 2025-12-25?")
    assert answer == "Dates: 2025-12-25 is a Thursday."


async def test_a_call_never_written_readably_goes_to_the_best_ranked_category() -> None:
    """Seen with the 1.5B offered a category named "tools": `<tools></tools>`, nudged or not."""
    unreadable = AssistantTurn(text='<tool_call tool="dates" arguments={"objective": }>')
    script = ScriptedModel([*[unreadable] * (MAX_NUDGES + 1), AssistantTurn(text="A Thursday.")])
    category = thursday_category()
    question = "What weekday is 2025-12-25?"
    answer = await MainAgent(RecoveringModel(script), dates(category)).ask(question)
    assert answer == "A Thursday."
    task = category.requests[0].messages[-1].content or ""
    assert read_task(task) == (question, question)
    told = script.requests[-1].messages
    assert told[-2].tool_calls[0].name == "any_category"
    assert told[-1].role == "tool" and "2025-12-25 is a Thursday." in (told[-1].content or "")


async def test_an_unreadable_call_no_category_fits_is_returned_as_it_was_written() -> None:
    unreadable = AssistantTurn(text='<tool_call tool="dates" arguments={"objective": }>')
    main = RecoveringModel(ScriptedModel([unreadable] * (MAX_NUDGES + 1)))
    category = ScriptedModel([])
    answer = await MainAgent(main, dates(category)).ask("Sing me a song about whales")
    assert answer == unreadable.text
    assert category.requests == []


@pytest.mark.parametrize(
    "reply",
    [
        # Seen with the 1.5B in two demo runs: "you can use the `files` tool to list ...".
        "To find the weekday, you can use the `dates` tool with the date.",
        # Seen on BFCL's pooled catalog: a tool of the router, which only categories offer.
        "To find the weekday, I will use the `describe_date` function.",
        "To find the weekday, call the dates tool with the date.",
    ],
)
async def test_a_reply_telling_the_user_to_use_a_tool_runs_the_message_in_a_category(
    reply: str,
) -> None:
    told = AssistantTurn(text=reply)
    script = ScriptedModel([told, AssistantTurn(text="A Thursday.")])
    category = thursday_category()
    question = "What weekday is 2025-12-25?"
    answer = await MainAgent(script, dates(category)).ask(question)
    assert answer == "A Thursday."
    assert read_task(category.requests[0].messages[-1].content or "") == (question, question)
    told_back = script.requests[-1].messages
    assert told_back[-1].role == "tool" and "2025-12-25 is a Thursday." in told_back[-1].content


#: A reply that is only a category's name ("call numbers"), as a recovering client
#: reports it: the text, no call, and why.
_BARE = AssistantTurn(text="call numbers", unread_call="it names numbers but is no call")


@pytest.mark.parametrize(
    "replies",
    [
        # Seen with the 1.5B on demo task f2 (third run): the reply named `files`, then
        # `text_analysis`; the category named first runs.
        [
            AssistantTurn(
                text="You can use the `numbers` tool to read it, then use the `dates` tool."
            )
        ],
        # Only a category's name, still so after the nudges.
        [_BARE, _BARE, _BARE],
    ],
    ids=["told-to-use", "bare-name"],
)
async def test_a_reply_naming_a_category_runs_the_message_there(
    replies: list[AssistantTurn],
) -> None:
    """ "What port is set in config.ini?" matches no category's tools, so the best-ranked
    category is none: the category the reply names runs the message."""
    port = ToolCall(name="calculate", arguments={"expression": "8000 + 80"})
    numbers = ScriptedModel([AssistantTurn(tool_calls=[port]), AssistantTurn(text="8080")])
    meta = MetaManager(
        [
            CategoryManager(
                "Dates",
                "Weekdays and calendars.",
                [tool(describe_date)],
                ScriptedModel([]),
                guards=SMALL,
            ),
            # The category's own guards are not what this tests: it runs the call it is given.
            CategoryManager("Numbers", "Arithmetic.", [tool(calculate)], numbers),
        ],
        guards=SMALL,
    )
    assert all(r.score == 0 for r in meta.rank("What port is set in config.ini?"))
    main = ScriptedModel([*replies, AssistantTurn(text="It is 8080.")])
    answer = await MainAgent(main, meta).ask("What port is set in config.ini?")
    assert answer == "It is 8080."
    assert len(numbers.requests) == 2  # the call, then the answer


@pytest.mark.parametrize(
    "reply",
    [
        "Sorry, I can't book flights. You could use the `dates` tool to check the weekday.",
        "The `dates` category does not book flights; use it for weekdays only.",
        "Hello! Ask me about dates.",
        "You can use the `print` function: print('2025-12-25').",
        # Plain words that happen to be a category's name name no tool to use.
        "To keep it, use dates or a calendar app; I can only tell weekdays.",
    ],
)
async def test_a_reply_that_declines_or_names_no_tool_to_use_is_the_answer(reply: str) -> None:
    category = ScriptedModel([])
    main = ScriptedModel([AssistantTurn(text=reply)])
    answer = await MainAgent(main, dates(category)).ask("Book me a flight to Rome on 2025-12-25")
    assert answer == reply
    assert category.requests == []


async def test_after_a_category_call_a_reply_naming_a_tool_to_use_is_the_answer() -> None:
    final = "It is a Thursday. Next time you can use the `dates` tool yourself."
    main = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text=final)])
    category = thursday_category()
    answer = await MainAgent(main, dates(category)).ask("What weekday is 2025-12-25?")
    assert answer == final
    assert len(category.requests) == 2  # one run only


async def test_the_category_tools_are_offered_without_the_notes_the_instructions_give() -> None:
    meta = dates(thursday_category())
    main = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text="A Thursday.")])
    await MainAgent(main, meta).ask("What weekday is 2025-12-25?")
    (offered,) = main.requests[0].tools
    full = meta.openai_tools()[0]
    assert offered.description == full["function"]["description"]
    assert offered.parameters == {
        "type": "object",
        "properties": {"objective": {"type": "string"}, "exact_input": {"type": "string"}},
        "required": ["objective", "exact_input"],
    }
    # The router's own schemas (MCP hosts, openai_tools users) keep their notes.
    assert full["function"]["parameters"]["properties"]["objective"]["description"]
    system = main.requests[0].messages[0].content
    assert "`objective` (the goal)" in system and "`exact_input` (every value" in system


async def test_after_several_results_in_one_round_the_model_is_asked_for_each_of_them() -> None:
    """Seen with the 1.5B model: two categories answered, its reply gave only the last."""

    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    def categories(request: ChatRequest) -> AssistantTurn:
        if any(m.role == "tool" for m in request.messages):
            return AssistantTurn(text="Done.")
        if "describe_date" in [t.name for t in request.tools]:
            call = ToolCall(name="describe_date", arguments={"date": "2025-12-25"})
        else:
            call = ToolCall(name="shout", arguments={"text": "hi"})
        return AssistantTurn(tool_calls=[call])

    model = ScriptedModel.from_function(categories)
    meta = MetaManager(
        [
            CategoryManager("Dates", "Weekdays.", [tool(describe_date)], model, guards=SMALL),
            CategoryManager("Text", "Shouting.", [shout], model, guards=SMALL),
        ],
        guards=SMALL,
    )
    both = [
        ToolCall(name="dates", arguments={"objective": "Weekday", "exact_input": "2025-12-25"}),
        ToolCall(name="text", arguments={"objective": "Shout", "exact_input": "hi"}),
    ]
    main = ScriptedModel([AssistantTurn(tool_calls=both), AssistantTurn(text="Thursday, and HI.")])
    assert await MainAgent(main, meta).ask("Weekday of 2025-12-25, and shout hi") == (
        "Thursday, and HI."
    )
    told = main.requests[1].messages
    assert [m.role for m in told[-3:]] == ["tool", "tool", "user"]
    assert told[-1].content == EACH_RESULT
    # One result: no such note.
    single = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text="A Thursday.")])
    await MainAgent(single, dates(thursday_category())).ask("What weekday is 2025-12-25?")
    assert single.requests[1].messages[-1].role == "tool"


async def test_the_category_reads_the_user_s_own_words_beside_the_objective() -> None:
    """Seen with the 1.5B: "hourly forecast" became the objective "3 day forecast"."""
    main = ScriptedModel([ask_dates("2025-12-25"), AssistantTurn(text="A Thursday.")])
    category = thursday_category()
    question = "Which weekday is Christmas 2025, in the Gregorian calendar?"
    assert await MainAgent(main, dates(category)).ask(question) == "A Thursday."
    task = category.requests[0].messages[1].content
    assert task.startswith(f"{question}\n\n(Your part: ")
    assert read_task(task) == ("Weekday of the date", "2025-12-25")
    # Words the objective already holds are not repeated.
    again = thursday_category()
    await dates(again).call_tool(
        "dates", {"objective": question, "exact_input": ""}, request=question
    )
    assert again.requests[0].messages[1].content == f"Objective: {question}\nExact input: "


async def test_calls_past_the_limit_of_one_reply_are_answered_as_not_run() -> None:
    """Seen with the 1.5B over 2,009 tools: 13 calls to one category in one reply."""

    def weekdays(request: ChatRequest) -> AssistantTurn:
        if any(m.role == "tool" for m in request.messages):
            return AssistantTurn(text="Found it.")
        date = read_task(request.messages[1].content)[1]
        return AssistantTurn(tool_calls=[ToolCall(name="describe_date", arguments={"date": date})])

    category = ScriptedModel.from_function(weekdays)
    days = [f"2025-12-{day:02d}" for day in range(20, 26)]
    many = AssistantTurn(tool_calls=[c for d in days for c in ask_dates(d).tool_calls])
    main = ScriptedModel([many, AssistantTurn(text="Six weekdays.")])
    agent = MainAgent(main, dates(category), max_calls_per_round=4)
    assert await agent.ask("Weekdays of 2025-12-20 to 2025-12-25?") == "Six weekdays."
    asked = {read_task(r.messages[1].content)[1] for r in category.requests}
    assert asked == set(days[:4])
    told = [m for m in main.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in told] == [c.id for c in many.tool_calls]
    assert all("not run: at most 4 category calls" in m.content for m in told[4:])
    assert not any("not run" in m.content for m in told[:4])


async def test_a_category_call_whose_input_makes_up_its_numbers_is_answered_not_run() -> None:
    """Seen with the 1.5B on the demo: "What weekday was my birthday?" became a call to
    the dates category with `exact_input: "2023-04-15"`, answered for a date nobody gave."""
    asking = "Which date is your birthday?"
    main = ScriptedModel([ask_dates("2023-04-15"), AssistantTurn(text=asking)])
    category = thursday_category()
    answer = await MainAgent(main, dates(category)).ask("What weekday was my birthday?")
    assert answer == asking
    assert category.requests == []  # the category never ran
    told = main.requests[1].messages[-1]
    assert told.role == "tool" and told.content.startswith("error: not run: the user has not given")
    assert "2023, 04, 15" in told.content and "a question" in told.content


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("dates", {"objective": "Weekday", "exact_input": {"date": "2023-04-15"}}),
        ("dates", {"objective": "Weekday", "exact_input": 20230415}),
        ("dates", {"objective": "Weekday", "exact_input": ["2023-04-15"]}),
        ("describe_date", {"date": "2023-04-15"}),  # a tool's own arguments are the input
        ("dates", {"objective": "Weekday", "date": "2023-04-15"}),
    ],
)
async def test_made_up_numbers_are_held_in_any_shape_of_input(
    name: str, arguments: dict[str, object]
) -> None:
    """Any input the category would be given is checked, not only an `exact_input` string."""
    asking = "Which date is your birthday?"
    made_up = AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])
    main = ScriptedModel([made_up, AssistantTurn(text=asking)])
    category = thursday_category()
    assert await MainAgent(main, dates(category)).ask("What weekday was my birthday?") == asking
    assert category.requests == []
    told = main.requests[1].messages[-1]
    assert told.content.startswith("error: not run: the user has not given 2023")


async def test_a_held_call_made_again_is_held_again_in_this_turn_and_the_next() -> None:
    """The note on a held call repeats its numbers; they are not thereby given."""
    again = AssistantTurn(text="Which date is your birthday?")
    made_up = ask_dates("2023-04-15")
    main = ScriptedModel([made_up, made_up, again, made_up, AssistantTurn(text="No date.")])
    category = thursday_category()
    agent = MainAgent(main, dates(category))
    assert await agent.ask("What weekday was my birthday?") == again.text
    assert await agent.ask("Please just tell me.") == "No date."
    assert category.requests == []  # held three times, never run
    held = [m for r in main.requests for m in r.messages[-1:] if m.role == "tool"]
    assert len(held) == 3 and all("not run: the user has not given" in m.content for m in held)


@pytest.mark.parametrize(
    ("earlier", "message", "exact_input"),
    [
        ([], "What weekday is Christmas 2025?", "2025-12-25"),  # one of its numbers is said
        ([], "What weekday is the twenty-fifth of December, 2025?", "2025-12-25"),
        (["My birthday is 2025-12-25."], "What weekday was my birthday?", "2025-12-25"),
        ([], "What weekday is it, in ISO week 52 of 2025?", "the Thursday of that week"),
        ([], "Describe the date of my birthday.", "my birthday"),  # no number: the category's
    ],
)
async def test_a_category_call_may_pass_numbers_the_conversation_holds(
    earlier: list[str], message: str, exact_input: str
) -> None:
    replies = [AssistantTurn(text="Noted.") for _ in earlier]
    main = ScriptedModel([*replies, ask_dates(exact_input), AssistantTurn(text="A Thursday.")])
    category = thursday_category()
    agent = MainAgent(main, dates(category))
    for said in earlier:
        await agent.ask(said)
    assert await agent.ask(message) == "A Thursday."
    assert len(category.requests) == 2  # it ran: a call, then its answer


async def test_a_number_an_earlier_result_of_the_turn_found_may_be_passed_on() -> None:
    """Demo x5's shape: the next call works with what a category found (week 52)."""
    main = ScriptedModel(
        [ask_dates("2025-12-25"), ask_dates("week 52"), AssistantTurn(text="Week 52.")]
    )
    call = ToolCall(name="describe_date", arguments={"date": "2025-12-25"})
    thursday = [AssistantTurn(tool_calls=[call]), AssistantTurn(text="Thursday, ISO week 52.")]
    category = ScriptedModel(thursday * 2)
    answer = await MainAgent(main, dates(category)).ask("Which ISO week holds 2025-12-25?")
    assert answer == "Week 52."
    assert len(category.requests) == 4  # both calls ran


async def test_only_the_exact_input_the_model_wrote_is_checked_for_made_up_numbers() -> None:
    """Seen with the 1.5B over 2,009 tools: a good category call carried an "executions"
    echo with a made-up id beside its `exact_input`; such keys go on as data."""
    echo = {"executions": [{"tool": "describe_date", "arguments": {"id": "1234567890"}}]}
    call = {"objective": "Weekday of the date", "exact_input": "2025-12-25", **echo}
    main = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="dates", arguments=call)]),
            AssistantTurn(text="A Thursday."),
        ]
    )
    category = thursday_category()
    assert await MainAgent(main, dates(category)).ask("What weekday is 2025-12-25?") == (
        "A Thursday."
    )
    assert len(category.requests) == 2  # it ran
    assert "1234567890" in category.requests[0].messages[1].content  # passed on as data
