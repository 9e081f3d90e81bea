"""What small local models really sent (Qwen2.5-Coder 1.5B/0.5B behind llama.cpp), replayed.

Each test replays the replies as they were seen: tool calls written as text in
`content` (through the real openai SDK and the fake server, as llama-server
returns them), an empty `request_input` mixed with real calls, and the same
successful call repeated round after round.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from meta_tools import tool
from meta_tools.agent import MainAgent
from meta_tools.category.manager import CategoryManager
from meta_tools.demo.dates import describe_date
from meta_tools.demo.numbers import calculate, describe_numbers
from meta_tools.guards import Guards
from meta_tools.llm import AssistantTurn, OpenAIChatModel, ScriptedModel, ToolCall
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.router.manager import MetaManager
from meta_tools.support.text import sentence
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)
from tests.guard_profiles import HAND_UPS, SMALL_EVERY_TURN

pytestmark = pytest.mark.anyio

#: These replies are a small model's: every guard runs, as it does for one.
SMALL = SMALL_EVERY_TURN
EMPTY_NOTE = SMALL.text("empty_reply")

CHRISTMAS = {"date": "2025-12-25"}
CHRISTMAS_RESULT = json.dumps(describe_date("2025-12-25"))


def unread_call_note(problem: str) -> str:
    return SMALL.text("unread_call", problem=sentence(problem))


def dates(model: Any) -> CategoryManager:
    return CategoryManager(
        "Dates", "Weekdays and calendars.", [tool(describe_date)], model, guards=SMALL
    )


def local_model(server: FakeLLMServer, **options: Any) -> OpenAIChatModel:
    return OpenAIChatModel(
        "qwen2.5-coder-1.5b", base_url=server.openai_base_url, api_key="unused", **options
    )


def text(content: str) -> Reply:
    return Reply(body=openai_text_reply(content))


WRITTEN_CALLS = {
    "bare": '{"name": "describe_date", "arguments": {"date": "2025-12-25"}}',
    "json-fence": '```json\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n```',
    "tool_result-tag": (
        '<tool_result>\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n</tool_result>'
    ),
    "unparsed-tool_call": (
        '<tool_call>\n{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n</tool_call>'
    ),
    "missing-brace": '{"name": "describe_date", "arguments": {"date": "2025-12-25"}',
}


@pytest.mark.parametrize("written", WRITTEN_CALLS.values(), ids=WRITTEN_CALLS.keys())
async def test_a_call_written_as_text_runs_the_tool_in_two_llm_calls(
    llm_server: FakeLLMServer, written: str
) -> None:
    llm_server.enqueue(text(written), text("2025-12-25 is a Thursday."))
    async with local_model(llm_server) as model:
        result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert (result.status, result.summary) == ("success", "2025-12-25 is a Thursday.")
    assert [(e.tool, e.arguments, e.ok) for e in result.executions] == [
        ("describe_date", CHRISTMAS, True)
    ]
    assert (result.usage.llm_calls, result.usage.recovered_calls) == (2, 1)
    # The recovered call goes back to the model as a real call, answered by a tool message.
    sent = llm_server.requests[1].body["messages"]
    assert sent[2]["tool_calls"][0]["function"]["name"] == "describe_date"
    assert sent[3]["role"] == "tool" and "Thursday" in sent[3]["content"]


async def test_several_calls_written_in_a_row_all_run(llm_server: FakeLLMServer) -> None:
    written = (
        '{"name": "describe_date", "arguments": {"date": "2025-12-25"}}\n'
        '{"name": "describe_date", "arguments": {"date": "2026-01-01"}}'
    )
    llm_server.enqueue(text(written), text("Thursday and Thursday."))
    async with local_model(llm_server) as model:
        result = await dates(model).run("Weekdays", "2025-12-25 and 2026-01-01")
    assert [e.arguments["date"] for e in result.executions] == ["2025-12-25", "2026-01-01"]
    assert (result.status, result.usage.recovered_calls) == ("success", 2)


async def test_a_call_that_cannot_be_read_is_answered_so_the_model_retries(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(
        text('{"name": "weekday_of", "arguments": {"date": "2025-12-25"}}'),
        Reply(body=openai_tool_reply(wire_tool_call("c1", "describe_date", CHRISTMAS))),
        text("Thursday."),
    )
    async with local_model(llm_server) as model:
        result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert (result.status, result.summary, result.usage.llm_calls) == ("success", "Thursday.", 3)
    told = llm_server.requests[1].body["messages"][-1]
    assert told == {
        "role": "user",
        "content": "Your reply looks like a tool call, but it could not be read: 'weekday_of' is"
        " not one of the offered tools (decline, describe_date, request_input); did you mean"
        " 'describe_date'? Call one of the offered tools through the tool-calling interface, with its arguments as a JSON object."
        " If none of them fits, say so in plain text.",
    }


async def test_a_result_written_for_a_tool_that_did_not_run_is_no_answer(
    llm_server: FakeLLMServer,
) -> None:
    """Seen with the 1.5B in a category of the 2,009 tools' catalog: after one call it wrote
    a fenced result of a tool that never ran, which stood as the run's answer."""
    made_up = '<tool_response>\n<tool_result tool="calculate" status="ok">\n8\n</tool_result>'
    llm_server.enqueue(
        text('{"name": "describe_date", "arguments": {"date": "2025-12-25"}}'),
        text(made_up),
    )
    tools = [tool(describe_date), tool(calculate)]
    async with local_model(llm_server) as model:
        category = CategoryManager(
            "Days and sums", "Weekdays and arithmetic.", tools, model, guards=SMALL
        )
        result = await category.run("Weekday of the date, and 3 + 5", "2025-12-25")
    assert [e.tool for e in result.executions] == ["describe_date"]
    assert (result.status, result.usage.llm_calls) == ("success", 2)
    assert "Thursday" in result.summary and "calculate" not in result.summary


async def test_with_recovery_turned_off_a_written_call_is_the_text_it_was(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(text(WRITTEN_CALLS["json-fence"]))
    async with local_model(llm_server, recover_text_calls=False) as model:
        off = Guards("small", disable=["text_calls", *HAND_UPS])
        category = CategoryManager("Dates", "Weekdays.", [tool(describe_date)], model, guards=off)
        result = await category.run("What weekday is this date?", "2025-12-25")
    assert (result.status, result.executions, result.usage.recovered_calls) == (
        "no_suitable_tool",
        [],
        0,
    )


async def test_the_main_agent_recovers_a_category_call_written_in_tool_call_tags(
    llm_server: FakeLLMServer,
) -> None:
    category_call = {"objective": "Weekday of the date", "exact_input": "2025-12-25"}
    llm_server.enqueue(
        text(
            f"<tool_call>\n{json.dumps({'name': 'dates', 'arguments': category_call})}\n</tool_call>"
        ),
        text(WRITTEN_CALLS["bare"]),
        text("Thursday."),
        text("2025-12-25 is a Thursday."),
    )
    async with local_model(llm_server) as model:
        meta = MetaManager([dates(model)])
        answer = await MainAgent(model, meta, guards=SMALL).ask("What weekday is 2025-12-25?")
    assert answer == "2025-12-25 is a Thursday."
    last = llm_server.requests[3].body["messages"]
    assert last[-2]["tool_calls"][0]["function"]["name"] == "dates"
    assert json.loads(last[-1]["content"])["executions"][0]["tool"] == "describe_date"


def calls(*items: tuple[str, dict[str, Any]]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(name=n, arguments=a) for n, a in items])


async def test_an_empty_request_input_beside_real_calls_is_rejected_and_the_calls_run() -> None:
    """The 0.5B model, after a successful round, sent `request_input {}` with a real call."""
    model = ScriptedModel(
        [
            calls(("describe_date", CHRISTMAS)),
            calls(("request_input", {}), ("describe_date", {"date": "2026-01-01"})),
            AssistantTurn(text="Both are Thursdays."),
        ]
    )
    result = await dates(model).run("Weekdays", "2025-12-25 and 2026-01-01")
    assert (result.status, result.summary, result.question) == (
        "success",
        "Both are Thursdays.",
        None,
    )
    assert [e.arguments["date"] for e in result.executions] == ["2025-12-25", "2026-01-01"]
    rejected = [m for m in model.requests[2].messages if m.name == "request_input"]
    assert [m.content for m in rejected] == [
        '<tool_result tool="request_input" status="error">\nrequest_input is invalid: `question`'
        " is missing or empty. Call request_input again with `question` filled in, or call the"
        " tool that does the task.\n</tool_result>"
    ]
    model.assert_complete()


async def test_an_empty_request_input_alone_is_answered_and_a_real_question_then_ends_the_run() -> (
    None
):
    model = ScriptedModel(
        [
            calls(("request_input", {})),
            calls(("request_input", {"missing": ["date"], "question": "Which date?"})),
        ]
    )
    result = await dates(model).run("What weekday was my birthday?", "")
    assert (result.status, result.question, result.missing) == (
        "insufficient_input",
        "Which date?",
        ["date"],
    )
    model.assert_complete()


async def test_a_call_repeated_round_after_round_ends_the_run_with_its_result() -> None:
    """The 0.5B model called describe_date with the same date five rounds in a row."""
    model = ScriptedModel([calls(("describe_date", CHRISTMAS))] * 5)
    result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert result.status == "success"
    assert result.summary == f"describe_date: {CHRISTMAS_RESULT}"
    # A repeat runs again (a status may have changed); after the first, it was told to
    # finish, and after the second the run ended with the results.
    assert [(e.tool, e.round) for e in result.executions] == [
        ("describe_date", 1),
        ("describe_date", 2),
        ("describe_date", 3),
    ]
    assert (result.usage.llm_calls, model.remaining) == (3, 2)
    repeat, evaluation = model.requests[2].messages[-2:]
    assert (
        repeat.content
        == f'<tool_result tool="describe_date" status="ok">\n{CHRISTMAS_RESULT}\n</tool_result>'
    )
    assert evaluation.content.splitlines()[1] == (
        "- Those calls had already worked before: their results are above."
        " Reply with the answer now. Call no tool."
    )
    assert "already worked before" not in model.requests[1].messages[-1].content


async def test_a_repeat_that_the_model_then_answers_from_ends_as_its_answer() -> None:
    model = ScriptedModel(
        [
            calls(("describe_date", CHRISTMAS)),
            calls(("describe_date", {"date": "2025-12-25"})),
            AssistantTurn(text="Thursday."),
        ]
    )
    result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert (result.status, result.summary, len(result.executions)) == ("success", "Thursday.", 2)
    model.assert_complete()


def math(model: Any) -> CategoryManager:
    tools = [tool(calculate), tool(describe_numbers)]
    return CategoryManager("Math", "Arithmetic.", tools, model, guards=SMALL)


async def test_after_a_failed_call_the_model_is_not_invited_to_answer() -> None:
    """The 1.5B model answered `mean(4, 8, …)`'s error with "The mean is 20.0"."""
    mean = {"expression": "mean(4, 8, 15, 16, 23, 42)"}
    model = ScriptedModel(
        [
            calls(("calculate", mean)),
            calls(("describe_numbers", {"numbers": [4, 8, 15, 16, 23, 42]})),
            AssistantTurn(text="The mean is 18."),
        ]
    )
    result = await math(model).run("Mean of the numbers", "4, 8, 15, 16, 23, 42")
    assert (result.status, result.summary) == ("success", "The mean is 18.")
    after_failure = model.requests[1].messages[-1].content.splitlines()
    assert after_failure[1].startswith("- No call has worked yet, so there is no answer")
    assert (
        after_failure[2] == "- A call failed (calculate): fix its arguments, or use another tool."
    )
    assert not any("The results answer the task" in line for line in after_failure)
    after_success = model.requests[2].messages[-1].content.splitlines()
    assert after_success[1].startswith("- The results answer the task: reply now")


async def test_an_answer_after_calls_that_all_failed_is_a_failure_not_a_made_up_result() -> None:
    """The 1.5B model answered "12% of 250"'s error with "15.0", reported as a success
    (`calculate` reads percentages now; `mean(...)` still fails as it did then)."""
    model = ScriptedModel(
        [calls(("calculate", {"expression": "mean(4, 8, 15)"})), AssistantTurn(text="15.0")]
    )
    result = await math(model).run("The mean of 4, 8 and 15", "4, 8, 15")
    assert result.status == "failed"
    assert result.summary.startswith("No tool call worked. calculate: ")
    assert "15.0" not in result.summary
    assert result.executions[0].error is not None
    assert result.executions[0].error.split(": ", 1)[1] in result.summary


async def test_a_run_whose_last_reply_is_still_an_unreadable_call_ends_with_its_results() -> None:
    """The 1.5B model wrote `<tool_call tool=… arguments=…` after a good round, three times."""
    unreadable = AssistantTurn(
        text='<tool_call tool="describe_date" arguments={"date": 2025-12-26}>'
    )
    model = RecoveringModel(
        ScriptedModel([calls(("describe_date", CHRISTMAS)), unreadable, unreadable, unreadable])
    )
    result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert (result.status, result.summary) == ("success", f"describe_date: {CHRISTMAS_RESULT}")
    assert result.usage.llm_calls == 4  # the call, then the reply answered twice with a note


async def test_schema_words_copied_into_written_arguments_are_dropped(
    llm_server: FakeLLMServer,
) -> None:
    """The 0.5B model wrote the schema's `required` list into its arguments."""
    echoed = '{"name": "describe_date", "arguments": {"date": "2025-12-25", "required": ["date"]}}'
    llm_server.enqueue(text(echoed), text("Thursday."))
    async with local_model(llm_server) as model:
        result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert [(e.arguments, e.ok) for e in result.executions] == [(CHRISTMAS, True)]
    assert result.summary == "Thursday."


async def test_the_same_call_written_several_times_in_one_turn_runs_once(
    llm_server: FakeLLMServer,
) -> None:
    """The 0.5B model wrote one call seven times in a row, the last cut off by the reply cap."""
    call = '{"name": "describe_date", "arguments": {"date": "2025-12-25"}}'
    written = "\n".join([call] * 6) + '\n{"name": "describe_date", "arguments": {"date'
    llm_server.enqueue(text(written), text("Thursday."))
    async with local_model(llm_server) as model:
        result = await dates(model).run("What weekday is this date?", "2025-12-25")
    assert [(e.tool, e.round) for e in result.executions] == [("describe_date", 1)]
    assert (result.summary, result.usage.recovered_calls) == ("Thursday.", 6)
    answered = [m for m in llm_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert len(answered) == 6 and all("Thursday" in m["content"] for m in answered)


async def test_the_main_agent_answers_an_unreadable_call_so_the_model_can_retry() -> None:
    """A main-agent reply that looks like a call but cannot be read is not the answer."""
    date_call = ToolCall(
        name="dates", arguments={"objective": "Weekday", "exact_input": "2025-12-25"}
    )
    main = ScriptedModel(
        [
            # As a recovering client reports such a reply: its text, no calls, and why.
            AssistantTurn(
                text='{"name": "dates", "arguments": {"objective": "Weekday", "exact',
                unread_call="the JSON ends early",
            ),
            AssistantTurn(tool_calls=[date_call]),
            AssistantTurn(text="2025-12-25 is a Thursday."),
        ]
    )
    category = ScriptedModel([calls(("describe_date", CHRISTMAS)), AssistantTurn(text="Thursday")])
    answer = await MainAgent(main, MetaManager([dates(category)]), guards=SMALL).ask(
        "Weekday of 2025-12-25?"
    )
    assert answer == "2025-12-25 is a Thursday."
    retry = main.requests[1].messages
    assert retry[-1].role == "user"
    # The loop reads the reply itself (guard `text_calls`), and says why it could not.
    assert retry[-1].content == unread_call_note("it is not valid JSON")


async def test_an_answer_that_copies_the_request_back_gives_the_results_instead() -> None:
    """Seen with the 1.5B over the large catalog: after the tool worked, its answer was
    the request it had been given, in a tag of its own."""
    request = (
        "I am planning a party on Christmas 2025. Which weekday is it, and what else falls then?"
    )
    recited = (
        "<tool_request>\nWhat the user asked, as context only (do the objective below, not the"
        f" whole request):\n{request}\n</tool_request>"
    )
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="describe_date", arguments=CHRISTMAS)]),
            AssistantTurn(text=recited),
        ]
    )
    result = await dates(model).run("Weekday of the date", "2025-12-25", request=request)
    assert result.status == "success"
    assert result.summary == f"describe_date: {CHRISTMAS_RESULT}"
    # The same words are an answer when no request was given.
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="describe_date", arguments=CHRISTMAS)]),
            AssistantTurn(text=recited),
        ]
    )
    assert (await dates(model).run("Weekday of the date", "2025-12-25")).summary == recited


async def test_a_line_of_the_prompt_copied_back_is_no_answer() -> None:
    """Seen with the 1.5B after a round: "call decline" (8 times in four runs' logs),
    "The task is still open." (3), "The results answer the task." (2), as its reply."""
    bad_date = ToolCall(name="describe_date", arguments={"date": "2025-13-45"})
    model = ScriptedModel(
        [AssistantTurn(tool_calls=[bad_date]), AssistantTurn(text="call decline")]
    )
    declined = await dates(model).run("Weekday of the date", "2025-13-45")
    assert declined.status == "no_suitable_tool"  # as the decline it names: the router retries
    assert declined.summary.startswith("No tool call worked. describe_date: ")
    for echo in ("The task is still open.", "The results answer the task."):
        call = ToolCall(name="describe_date", arguments=CHRISTMAS)
        model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text=echo)])
        result = await dates(model).run("Weekday of the date", "2025-12-25")
        assert (result.status, result.summary) == ("success", f"describe_date: {CHRISTMAS_RESULT}")


#: The evaluation prompt's bullet, as the 1.5B copied it into its answer.
COPIED_BULLET = (
    "The results answer the task: reply now with the answer in plain text, giving the"
    " values the results found. Call no tool."
)


async def test_an_empty_reply_before_any_result_is_asked_again(
    llm_server: FakeLLMServer,
) -> None:
    """Seen with the 1.5B on demo m7 ("What is the mean of 4, 8, 15, 16, 23 and 42?"):
    `calculate("mean(...)")` failed twice and was withdrawn; offered the other tools, the
    model replied nothing, the run ended failed and the main agent made up "22.5"."""
    mean = {"expression": "mean(4, 8, 15, 16, 23, 42)"}
    numbers = {"numbers": [4, 8, 15, 16, 23, 42]}
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("c1", "calculate", mean))),
        Reply(body=openai_tool_reply(wire_tool_call("c2", "calculate", mean))),
        text(""),
        Reply(body=openai_tool_reply(wire_tool_call("c3", "describe_numbers", numbers))),
        text("The mean is 18."),
    )
    tools = [tool(calculate), tool(describe_numbers)]
    async with local_model(llm_server) as model:
        category = CategoryManager("Math", "Numbers.", tools, model, guards=SMALL)
        result = await category.run("Mean of the numbers", "4, 8, 15, 16, 23, 42")
    assert (result.status, result.summary) == ("success", "The mean is 18.")
    asked = llm_server.requests[3].body
    assert asked["messages"][-1] == {"role": "user", "content": EMPTY_NOTE}
    assert "calculate" not in [t["function"]["name"] for t in asked["tools"]]


async def test_an_answer_that_opens_with_lines_of_the_prompt_keeps_only_its_own_words() -> None:
    """Seen with the 1.5B over the large catalog: its answer opened with the evaluation
    prompt's bullet, copied ("The results answer the task: reply now with ..."), and the
    main agent passed that on to the user."""
    copied = COPIED_BULLET
    replies = {
        f"{copied} Christmas 2025 is a Thursday.": "Christmas 2025 is a Thursday.",
        # A sentence that only shares a few words with the prompt is the model's own.
        "The results show a Thursday.": "The results show a Thursday.",
        "Never repeat. It is a Thursday.": "Never repeat. It is a Thursday.",  # two words
        # Only opening sentences are cut: the same words later are left as written.
        f"It is a Thursday. {copied}": f"It is a Thursday. {copied}",
    }
    for reply, answer in replies.items():
        call = ToolCall(name="describe_date", arguments=CHRISTMAS)
        model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text=reply)])
        result = await dates(model).run("Weekday of the date", "2025-12-25")
        assert (result.status, result.summary) == ("success", answer)
    # Nothing but copied lines: the results are the answer.
    call = ToolCall(name="describe_date", arguments=CHRISTMAS)
    model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text=copied)])
    result = await dates(model).run("Weekday of the date", "2025-12-25")
    assert (result.status, result.summary) == ("success", f"describe_date: {CHRISTMAS_RESULT}")


@pytest.mark.parametrize(
    ("answer", "given"),
    [
        ("24", False),  # seen: the task's number, which no call used or returned
        ("The answer is 24.", False),
        ("31", True),  # the result's
        ("31 days, times 24 is 744 hours", True),
        ("2025", True),  # a number the call was given
        ("Thursday", True),  # no number: not this check's business
        ("5", False),  # seen on demo d8 (52 weeks): a number nothing gave
        ("744", False),  # worked out from the results: the results say it
        ("31 days, 744 hours", True),
        (f"{COPIED_BULLET} 24", False),  # checked once the copied bullet is cut
    ],
)
async def test_an_answer_with_no_number_of_the_run_gives_the_results_instead(
    answer: str, given: bool
) -> None:
    """Seen with the 1.5B on demo x5 ("How many days from 2025-01-01 to 2025-02-01?
    Multiply that by 24."): `date_difference` gave 31 days and the answer was "24";
    on demo d8 ("whole weeks", given 52) the answer was "5"."""

    @tool
    def date_difference(start: str, end: str) -> str:
        """Days between two dates."""
        return "31 days"

    call = ToolCall(name="date_difference", arguments={"start": "2025-01-01", "end": "2025-02-01"})
    model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text=answer)])
    category = CategoryManager("Dates", "Calendars.", [date_difference], model, guards=SMALL)
    result = await category.run(
        "Days between the dates, multiplied by 24", "2025-01-01 and 2025-02-01"
    )
    assert result.status == "success"
    assert result.summary == (answer if given else "date_difference: 31 days")


@pytest.mark.parametrize(
    ("answer", "found", "invented"),
    [
        ("3.33", "3.3333333333333335", False),  # rounded to the answer's precision
        ("25%", '{"share": 0.25}', False),  # a fraction as a percentage
        ("5 April", '{"date": "2025-04-05"}', False),  # "05" is 5
        ("1,234", '{"n": 1234}', False),
        ("250", "1,250\n2,300", False),  # "1,250" may be a list: each reading counts
        ("200", "[100,200,300]", False),
        ("-3", '{"change": -3}', False),
        ("744", "31 days", True),  # worked out by the model, not by a tool
        ("5", '{"weeks": {"weeks": 52, "days": 0}}', True),
        ("24", "31 days", True),
        ("Thursday", "31 days", False),  # no number: not this check's business
    ],
)
def test_what_counts_as_invented_numbers(answer: str, found: str, invented: bool) -> None:
    from meta_tools.guards.findings import invents_numbers

    assert invents_numbers(answer, found) is invented


def test_numbers_are_read_with_their_thousands_separators() -> None:
    from meta_tools.support.numbers import number_values, read_numbers

    assert {1234567.0, 8736.0} <= number_values("8,736 hours, 1,234,567 people")
    assert number_values("[100,200]") >= {100.0, 200.0, 100200.0}
    assert [n.text for n in read_numbers("4, 8, 15 and 16,5 and 3,14")] == [
        "4",
        "8",
        "15",
        "16,5",
        "3,14",
    ]
    assert number_values("16,5") == {16.5, 16.0, 5.0}  # a decimal comma, or a list
    assert number_values("744.0 and 6.40") == {744.0, 6.4}
    assert [n.text for n in read_numbers("1,234.56")] == ["1,234.56"]
    assert 1234.56 in number_values("1,234.56")


def test_a_phrase_of_the_note_is_an_echo_and_other_words_are_not() -> None:
    from meta_tools.guards.note import Note

    note = Note.of("Round 2 of 3 is done.\n- No call has worked yet: call a tool, or call decline.")
    assert note.echoed_by("Call decline.")
    assert not note.echoed_by("call it off")
    assert not note.echoed_by("decline")  # one word is never an echo
    assert not note.echoed_by("2 of 3")  # nor numbers with one word between
    # The task is cut out word by word: a short input leaves the other words whole.
    quoting = Note.of("The task: a\n- The task is still open: call a tool.", ("a", "e"))
    assert quoting.echoed_by("The task is still open.")
    assert not quoting.echoed_by("The task: a")


async def test_a_question_for_the_user_that_copies_the_nudge_is_not_asked() -> None:
    """Seen with the 1.5B over BFCL's pooled functions: nudged after a call to a tool
    that is not offered, it called `request_input` with the nudge as its question, and
    the run ended `insufficient_input`, asking the user the router's own note."""
    unknown = '{"name": "describe_date_3", "arguments": {"date": "2025-12-25"}}'
    note = unread_call_note(
        "'describe_date_3' is not one of the offered tools (decline, describe_date,"
        " request_input); did you mean 'describe_date'?"
    )
    copied = ToolCall(
        name="request_input", arguments={"missing": ["describe_date_3"], "question": note}
    )
    model = ScriptedModel(
        [
            AssistantTurn(text=unknown, unread_call="not offered"),
            AssistantTurn(tool_calls=[copied]),
            AssistantTurn(tool_calls=[ToolCall(name="describe_date", arguments=CHRISTMAS)]),
            AssistantTurn(text="A Thursday."),
        ]
    )
    result = await dates(model).run("Weekday of the date", "2025-12-25")
    assert (result.status, result.summary) == ("success", "A Thursday.")
    answered = model.requests[2].messages[-2]  # the tool message, before the evaluation
    assert answered.role == "tool" and answered.name == "request_input"
    assert "repeats the note you were given" in (answered.content or "")


@pytest.mark.parametrize(
    "question",
    [
        # A question of its own, after a failed call: words of the note, but no copy.
        "Which date do you mean? The one given could not be read.",
        # It quotes the task, which the loop's note quotes too.
        "Which year is meant for the party on the last friday of next month?",
    ],
)
async def test_a_question_of_its_own_is_asked(question: str) -> None:
    bad_date = ToolCall(name="describe_date", arguments={"date": "2025-13-45"})
    asked = ToolCall(name="request_input", arguments={"missing": ["date"], "question": question})
    model = ScriptedModel([AssistantTurn(tool_calls=[bad_date]), AssistantTurn(tool_calls=[asked])])
    request = "Plan the party on the last friday of next month, which weekday is it?"
    objective = "Weekday of the party on the last friday of next month"
    result = await dates(model).run(objective, "that friday", request=request)
    assert (result.status, result.question) == ("insufficient_input", question)


@pytest.mark.parametrize(
    ("objective", "answer"),
    [
        ("Weekday of 2025-12-25 for the party", "Thursday"),  # one word of the prompt
        ("Weekday of the party on 2025-12-25", "the party on 2025-12-25"),  # the objective's words
        ("Weekday of the date", "The task is done: a Thursday."),
    ],
)
async def test_an_answer_that_shares_words_with_the_prompt_is_the_answer(
    objective: str, answer: str
) -> None:
    call = ToolCall(name="describe_date", arguments=CHRISTMAS)
    model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text=answer)])
    result = await dates(model).run(objective, "2025-12-25")
    assert (result.status, result.summary) == ("success", answer)
