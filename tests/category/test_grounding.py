"""Calls that nothing ties to their task are answered, not run; twice, and the category declines."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

import pytest

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import RoutingConfig
from meta_tools.guards.grounding import Grounds, guessed_values, unfounded_numbers
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.tools.pack import as_tool
from tests.guard_profiles import SMALL_EVERY_TURN

pytestmark = pytest.mark.anyio

RAN: list[str] = []


@tool
def calculate_investment_value(principal: float, interest_rate: float, years: int) -> float:
    """The value of an investment after compound interest."""
    RAN.append("calculate_investment_value")
    return principal * (1 + interest_rate) ** years


@tool
def shorten(long_url: str) -> str:
    """Make a short URL for a long one."""
    RAN.append("shorten")
    return "https://sho.rt/x1"


@tool
def find_order(query: str) -> str:
    """Find an order by a word of its description."""
    return "order A-1234 (blue parcel)"


@tool
def fetch(ref: str) -> str:
    """Fetch a record by reference."""
    RAN.append(f"fetch {ref}")
    return f"{ref}: out for delivery"


@tool
def film_search(genre: str) -> str:
    """Search films and movies by genre."""
    RAN.append("film_search")
    return f"{genre}: Alien (1979), The Thing (1982)"


@tool
def convert(amount: float, unit: str = "celsius", exact: bool = False) -> str:
    """Convert an amount to another unit."""
    return f"{amount} {unit}"


@tool
def weekday_of(date: str) -> str:
    """The weekday of a date."""
    return "Saturday"


@tool
def paint(colour: Literal["red", "blue"]) -> str:
    """Paint the wall."""
    return colour


def calls(name: str, arguments: dict[str, object]) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])


def category(model: ScriptedModel, *tools: object, name: str = "Finance") -> CategoryManager:
    """A category under the small-model guards, which hold unfounded calls."""
    listed: list[Any] = list(tools)
    return CategoryManager(name, f"{name} tools.", listed, model, guards=SMALL_EVERY_TURN)


INVESTMENT = ("calculate_investment_value", {"principal": 1000, "interest_rate": 0.05, "years": 5})
MOVIES = "Can you list some horror movies I can watch?"


@pytest.fixture(autouse=True)
def _nothing_ran_yet() -> None:
    RAN.clear()


async def test_an_unrelated_call_on_made_up_values_is_answered_and_the_model_can_decline() -> None:
    model = ScriptedModel([calls(*INVESTMENT), calls("decline", {"reason": "No movie tool here."})])
    result = await category(model, calculate_investment_value).run(MOVIES, MOVIES)
    assert (result.status, result.summary, RAN) == ("no_suitable_tool", "No movie tool here.", [])
    told = [m.content or "" for m in model.requests[1].messages if m.role == "tool"]
    assert len(told) == 1 and "was not run" in told[0] and "[1000, 0.05, 5]" in told[0]


async def test_a_second_unfounded_call_declines_the_category() -> None:
    model = ScriptedModel([calls(*INVESTMENT), calls(*INVESTMENT)])
    result = await category(model, calculate_investment_value).run(MOVIES, MOVIES)
    assert (result.status, RAN, result.executions) == ("no_suitable_tool", [], [])
    assert "calculate_investment_value" in result.summary
    assert len(model.requests) == 2


async def test_text_after_an_unfounded_call_is_a_decline_not_a_failure() -> None:
    model = ScriptedModel([calls(*INVESTMENT), AssistantTurn(text="I cannot list movies.")])
    result = await category(model, calculate_investment_value).run(MOVIES, MOVIES)
    # The call was held, so the summary says that nothing ran (f2406bc), not the text.
    assert (result.status, result.summary) == (
        "no_suitable_tool",
        "No tool was run: the calls made were held, because the task gives none of their values.",
    )


@pytest.mark.parametrize(
    ("task", "call", "ran"),
    [
        # a vague task, a related tool: the made-up URL is the model's best guess, and runs
        (
            "Make a short URL for the party invitation.",
            ("shorten", {"long_url": "http://www.ourparty.example"}),
            ["shorten"],
        ),
        # an unrelated-looking tool with a value the task gives runs
        (
            "Invest 2500 at 3% for ten years.",
            (INVESTMENT[0], {"principal": 2500, "interest_rate": 0.03, "years": 10}),
            ["calculate_investment_value"],
        ),
    ],
)
async def test_a_related_tool_or_a_given_value_runs(
    task: str, call: tuple[str, dict[str, object]], ran: list[str]
) -> None:
    model = ScriptedModel([calls(*call), AssistantTurn(text="done")])
    result = await category(model, shorten, calculate_investment_value).run(task, task)
    assert (result.status, RAN) == ("success", ran)


async def test_a_value_an_earlier_result_gave_is_founded() -> None:
    model = ScriptedModel(
        [
            calls("find_order", {"query": "blue"}),
            calls("fetch", {"ref": "A-1234"}),
            AssistantTurn(text="Out for delivery."),
        ]
    )
    result = await category(model, find_order, fetch).run("Where is my blue order?", "blue")
    assert (result.status, RAN) == ("success", ["fetch A-1234"])


def guessed(func: Callable[..., object], arguments: dict[str, object], task: str) -> list[object]:
    found = as_tool(func)
    return guessed_values(
        ToolCall(name=found.name, arguments=arguments), found, Grounds.of(task, "")
    )


def test_values_chosen_from_the_schema_are_no_guess_and_numbers_may_be_words() -> None:
    assert guessed(paint, {"colour": "red"}, "Hello") == []  # an enum member
    assert (
        guessed(convert, {"amount": 30, "unit": "celsius", "exact": True}, "Make it thirty") == []
    )
    assert guessed(convert, {"amount": 41, "unit": "celsius", "exact": True}, "Hello") == [41]
    assert guessed(convert, {"amount": 41, "unit": "kelvin"}, "Hello") == [41, "kelvin"]
    assert guessed(convert, {"amount": 0.05}, "Make it 5%") == []  # a rate given as a percent


def test_one_word_in_common_is_chance_two_are_a_fit() -> None:
    made_up = {"date": "2023-04-15"}
    assert guessed(weekday_of, made_up, "What weekday was my birthday?") == ["2023-04-15"]
    assert guessed(weekday_of, made_up, "The weekday of the date of my birthday?") == []
    assert guessed(weekday_of, {"date": "1990-05-14"}, "My weekday: born 1990-05-14") == []


async def test_the_router_tries_the_next_category_after_an_unfounded_decline() -> None:
    def reply(request: ChatRequest) -> AssistantTurn:
        in_films = '"Films"' in (request.messages[0].content or "")
        if any(m.role == "tool" and "Alien" in (m.content or "") for m in request.messages):
            return AssistantTurn(text="Alien and The Thing.")
        if in_films:
            return calls("film_search", {"genre": "horror"})
        return calls(*INVESTMENT)

    model = ScriptedModel.from_function(reply)
    router = MetaManager(
        [category(model, calculate_investment_value), category(model, film_search, name="Films")],
        routing=RoutingConfig(retry_categories=1),
    )
    result = await router.call_tool("finance", {"objective": MOVIES, "exact_input": "horror"})
    assert (result.status, result.category, result.declined) == ("success", "Films", ["Finance"])
    assert RAN == ["film_search"]
    assert json.loads(result.for_agent())["declined"] == ["Finance"]


@pytest.mark.parametrize(
    ("passed", "heard", "made_up"),
    [
        ("25°C", "Convert this temperature to Fahrenheit.", ["25"]),
        ("2023-04-15", "What weekday was my birthday?", ["2023", "04", "15"]),
        ("1.75", "Convert my height to centimeters.", ["1.75"]),
        ("0.15 * 80", "What is 15% of 80?", []),  # one number the user gave is enough
        ("2025-01-01 and 2025-02-01", "From 2025/01/01 to 2025/02/01", []),
        ("5 mi to km", "Convert five miles to km", []),
        ("31 * 24", 'date_difference: {"days": 31}\nMultiply that by 24.', []),
        ("-5 C to F", "minus 5 degrees", []),
        ("an mp3 in utf-8, Qwen2.5", "Describe the file.", []),  # numbers in names
        ("the user's essay", "Count the words in my essay.", []),  # no number at all
        # A value the agent rightly knows is held too (the README says so).
        ("100 C to F", "The boiling point of water in Fahrenheit?", ["100"]),
    ],
)
def test_numbers_passed_on_are_made_up_when_none_was_heard(
    passed: str, heard: str, made_up: list[str]
) -> None:
    assert unfounded_numbers(passed, heard) == made_up
