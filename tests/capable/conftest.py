"""Builders of the capable-model suite: real tools of a small office, and the router
built around them in each of the three ways a user reaches it.

Every tool is a plain Python function (a `FunctionTool`) that does its job and
records its call in `Toolbox.ran`, so that a test can assert which tools ran, in
which order, with which arguments. The models are `ScriptedModel`s playing a
capable model that does the right thing; nothing of the library is mocked.

Every builder takes `profile`: None builds with the library's defaults, a profile's
name is passed on as `guards=profile` (or written to the config's `guards` section).
"""

from __future__ import annotations

import ast
import datetime
import json
import operator
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from meta_tools import CategoryManager, FunctionTool, MainAgent, MetaManager
from meta_tools.category.result import CategoryResult
from meta_tools.config import RoutingConfig
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.serve.server import build_server

#: The tests that fail under the small-model profile, and the guard that harms each:
#: the price of that profile (`docs/guards.md`). Strict: a guard made harmless shows.
SMALL_PROFILE_HARMS: dict[str, str] = {
    # Words the model chose, for a tool whose description shares none with the task: held.
    "test_an_echo_with_words_the_model_chose_checks_the_connection": "unfounded_call",
    # A total the model adds up is in no result: replaced by the raw results.
    "test_a_terse_total_the_model_adds_up_is_the_answer": "invented_numbers",
    "test_a_german_total_with_a_decimal_comma_is_the_answer": "invented_numbers",
    "test_the_host_gets_a_terse_total_the_model_added_up": "invented_numbers",
    # A value the model knows (a marathon is 42.195 km) is no value the user gave.
    "test_a_marathon_s_length_the_model_knows_is_converted": "made_up_input",
    # A reply that is a `<tool_response>` block is taken as one the model made up: no tool
    # ran, so the category it names (else the best-ranked one) runs for the message.
    "test_a_tool_response_block_the_user_asked_for_is_the_answer": "written_result",
    # The fifth category call of one reply is answered "not run".
    "test_five_categories_called_in_one_reply_all_run": "round_cap",
    # A decline is run again in the best-ranked other category.
    "test_a_decline_from_the_category_the_host_chose_is_the_result": "retry_declined",
    # The first round's short results are the answer, in the tools' words rather than the
    # model's (and a task in steps without a word that says so ends after its first step).
    "test_a_balance_with_its_thousands_separator_and_currency_is_the_answer": "hand_up_result",
    "test_a_balance_written_with_a_thousands_separator_is_the_answer": "hand_up_result",
    "test_a_build_polled_in_two_rounds_gives_the_user_its_new_state": "hand_up_result",
    "test_a_chinese_user_gets_the_balance_in_chinese": "hand_up_result",
    "test_a_city_written_in_chinese_is_looked_up_by_its_english_name": "hand_up_result",
    "test_a_date_worked_out_from_today_in_the_instructions_is_passed_on": "hand_up_result",
    "test_a_failed_news_search_falls_back_to_the_web": "results_as_answer",
    "test_a_german_host_gets_the_weekday_in_german": "hand_up_result",
    "test_a_german_user_gets_a_total_with_a_decimal_comma": "hand_up_result",
    "test_a_german_user_gets_the_weather_in_german": "hand_up_result",
    "test_a_host_s_calls_to_two_categories_at_once_both_run": "hand_up_result",
    "test_a_joke_the_model_writes_is_posted_and_the_result_says_so": "hand_up_result",
    "test_a_model_that_answers_from_the_request_needs_one_call_per_city": "hand_up_result",
    "test_a_python_expression_is_run_by_the_code_category": "hand_up_result",
    "test_a_python_snippet_runs_and_its_value_is_the_answer": "hand_up_result",
    "test_a_sent_email_is_not_sent_again_by_another_category": "hand_up_result",
    "test_a_sent_email_is_reported_once_and_stays_in_the_result": "hand_up_result",
    "test_a_spanish_conversion_is_answered_in_spanish": "hand_up_result",
    "test_a_spanish_host_gets_the_conversion_in_spanish": "hand_up_result",
    "test_a_spanish_user_gets_the_weekday_in_spanish": "hand_up_result",
    "test_a_wait_of_a_few_seconds_the_model_picks_runs": "hand_up_result",
    "test_a_weight_written_with_its_unit_glued_on_is_passed_as_written": "hand_up_result",
    "test_a_tool_whose_words_the_request_does_not_use_is_offered_and_runs": "hand_up_result",
    "test_an_amount_in_millions_written_as_4_2m_is_passed_as_written": "hand_up_result",
    "test_an_average_written_in_chinese_is_the_answer": "hand_up_result",
    "test_an_average_written_in_english_is_the_answer": "hand_up_result",
    "test_hours_written_as_2_5h_are_passed_as_written": "hand_up_result",
    "test_one_category_answers_the_weather_in_madrid": "hand_up_result",
    "test_one_tool_reads_the_port_from_the_config_file": "hand_up_result",
    "test_revenue_written_in_millions_is_the_answer": "hand_up_result",
    "test_the_host_gets_the_weather_in_the_capital_of_france": "hand_up_result",
    "test_the_host_polls_a_build_twice_and_hears_that_it_passed": "hand_up_result",
    "test_the_host_sees_a_sent_email_once_and_in_the_result": "hand_up_result",
    "test_the_weather_in_the_capital_of_france_is_looked_up_for_paris": "hand_up_result",
    "test_the_weather_of_three_cities_is_looked_up_in_parallel": "hand_up_result",
    "test_the_weekday_of_the_apollo_11_landing_comes_from_the_date_the_model_knows": "hand_up_result",
    "test_tomorrow_is_worked_out_from_the_date_the_category_notes_give": "hand_up_result",
    "test_two_categories_called_in_one_reply_both_answer": "hand_up_result",
    "test_two_categories_in_sequence_read_the_port_then_email_it": "hand_up_result",
    "test_two_tools_in_sequence_find_the_config_file_then_read_it": "hand_up_result",
}


@pytest.fixture(params=[None, "small"], ids=["default", "small"])
def profile(request: pytest.FixtureRequest) -> str | None:
    """Each conversation runs with the default guards and with the small-model profile."""
    harm = SMALL_PROFILE_HARMS.get(request.node.originalname)
    if request.param == "small" and harm is not None:
        reason = f"profile 'small': {harm}"
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    return request.param


#: The date the office's assistant is told it is (MainAgent instructions, category notes).
TODAY = "2026-03-14"


class Toolbox:
    """The office's real tools; each call is appended to `ran` as (tool, arguments).

    Args:
        build_states: what successive `build_status` calls report, in order.
    """

    def __init__(
        self, build_states: Sequence[tuple[str, int]] = (("running", 60), ("passed", 100))
    ):
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self._build_states = list(build_states)
        self._methods: dict[str, Callable[..., Any]] = {
            name: getattr(self, name) for name in TOOL_NAMES
        }

    def tools(self, names: Iterable[str]) -> list[FunctionTool]:
        return [FunctionTool(name, self._methods[name]) for name in names]

    def _record(self, name: str, **arguments: Any) -> None:
        self.ran.append((name, arguments))

    # -- finance ---------------------------------------------------------------------------
    def get_balance(self, account: str) -> dict[str, Any]:
        """The current balance of a bank account.

        Args:
            account: the account's name, such as "checking" or "savings".
        """
        self._record("get_balance", account=account)
        return {"account": account, "balance": 1234.56, "currency": "EUR"}

    def list_transactions(self, account: str, month: str) -> list[dict[str, Any]]:
        """The card transactions of an account in one month.

        Args:
            account: the account's name.
            month: the month as YYYY-MM.
        """
        self._record("list_transactions", account=account, month=month)
        return [
            {"date": f"{month}-03", "payee": "Office Depot", "amount_usd": 120.40},
            {"date": f"{month}-11", "payee": "AWS", "amount_usd": 310.15},
            {"date": f"{month}-22", "payee": "Delta Air Lines", "amount_usd": 418.00},
        ]

    def get_revenue(self, quarter: str, year: int) -> dict[str, Any]:
        """The company's booked revenue in one quarter.

        Args:
            quarter: Q1, Q2, Q3 or Q4.
            year: the year, such as 2026.
        """
        self._record("get_revenue", quarter=quarter, year=year)
        return {"quarter": quarter, "year": year, "revenue_usd": 4820000}

    def convert_currency(
        self, amount: float, from_currency: str, to_currency: str
    ) -> dict[str, Any]:
        """Convert an amount of money between currencies at today's rate.

        Args:
            amount: how much.
            from_currency: ISO code of the currency it is in, such as USD.
            to_currency: ISO code of the currency wanted, such as EUR.
        """
        self._record(
            "convert_currency", amount=amount, from_currency=from_currency, to_currency=to_currency
        )
        rates = {("USD", "EUR"): 0.92, ("EUR", "USD"): 1.087, ("USD", "JPY"): 149.5}
        rate = rates[(from_currency, to_currency)]
        return {"amount": amount, "rate": rate, "result": round(amount * rate, 2)}

    # -- weather ---------------------------------------------------------------------------
    def get_weather(self, city: str) -> dict[str, Any]:
        """The current weather in a city.

        Args:
            city: the city's English name, such as "Paris".
        """
        self._record("get_weather", city=city)
        known = {
            "Paris": (18, "light rain"),
            "Shanghai": (24, "sunny"),
            "Berlin": (9, "overcast"),
            "Madrid": (21, "clear"),
            "Tokyo": (15, "windy"),
            "London": (11, "drizzle"),
        }
        if city not in known:
            raise ValueError(f"no weather station for {city!r}; use a city's English name")
        temperature, conditions = known[city]
        return {"city": city, "temperature_c": temperature, "conditions": conditions}

    # -- dates -----------------------------------------------------------------------------
    def describe_date(self, date: str) -> dict[str, Any]:
        """The weekday and ISO week of a date.

        Args:
            date: the date as YYYY-MM-DD.
        """
        self._record("describe_date", date=date)
        day = datetime.date.fromisoformat(date)
        return {"date": date, "weekday": day.strftime("%A"), "iso_week": day.isocalendar()[1]}

    def shift_date(self, date: str, days: int) -> dict[str, Any]:
        """The date a number of days after (or, negative, before) a date.

        Args:
            date: the date as YYYY-MM-DD.
            days: how many days to add.
        """
        self._record("shift_date", date=date, days=days)
        shifted = datetime.date.fromisoformat(date) + timedelta(days=days)
        return {"date": shifted.isoformat(), "weekday": shifted.strftime("%A")}

    def date_difference(self, start: str, end: str) -> dict[str, Any]:
        """The number of days from one date to another.

        Args:
            start: the first date, YYYY-MM-DD.
            end: the second date, YYYY-MM-DD.
        """
        self._record("date_difference", start=start, end=end)
        return {
            "days": (datetime.date.fromisoformat(end) - datetime.date.fromisoformat(start)).days
        }

    # -- files -----------------------------------------------------------------------------
    def list_files(self, folder: str) -> list[str]:
        """The files of a folder of the project.

        Args:
            folder: the folder, relative to the project root ("." for the root).
        """
        self._record("list_files", folder=folder)
        return {".": ["README.md", "config.ini", "src/"], "src": ["app.py", "util.py"]}[folder]

    def read_file(self, path: str) -> str:
        """The text of a file of the project.

        Args:
            path: the file's path, relative to the project root.
        """
        self._record("read_file", path=path)
        files = {"config.ini": "[server]\nhost = 0.0.0.0\nport = 8080\n", "README.md": "# Acme\n"}
        if path not in files:
            raise FileNotFoundError(f"no file {path!r}; list_files shows the files")
        return files[path]

    def search_files(self, pattern: str) -> list[dict[str, Any]]:
        """The lines of the project's files that contain a text.

        Args:
            pattern: the text to look for.
        """
        self._record("search_files", pattern=pattern)
        lines = {"TODO": [{"path": "src/app.py", "line": 12, "text": "# TODO: retry on 503"}]}
        return lines.get(pattern, [])

    # -- search ----------------------------------------------------------------------------
    def web_search(self, query: str) -> list[dict[str, str]]:
        """Search the web; the best results with their titles, addresses and snippets.

        Args:
            query: what to search for.
        """
        self._record("web_search", query=query)
        return [
            {
                "title": "Python 3.13 released",
                "url": "https://www.python.org/downloads/release/python-3130/",
                "snippet": "Python 3.13.0 was released on October 7, 2024.",
            }
        ]

    def search_news(self, query: str) -> list[dict[str, str]]:
        """Search today's news articles.

        Args:
            query: what the articles are about.
        """
        self._record("search_news", query=query)
        raise RuntimeError("news service unavailable (HTTP 503); try again later")

    # -- messaging -------------------------------------------------------------------------
    def post_message(self, channel: str, text: str) -> dict[str, Any]:
        """Post a message to a Slack channel.

        Args:
            channel: the channel's name, without '#'.
            text: the message.
        """
        self._record("post_message", channel=channel, text=text)
        return {"ok": True, "channel": channel, "ts": "1773487200.000100"}

    def send_email(self, to: str, subject: str, body: str) -> dict[str, Any]:
        """Send an email.

        Args:
            to: the recipient's address.
            subject: the subject line.
            body: the message.
        """
        self._record("send_email", to=to, subject=subject, body=body)
        return {"status": "ok", "to": to, "errors": []}

    def send_sms(self, to: str, text: str) -> dict[str, Any]:
        """Send a text message (SMS) to a phone number or a contact.

        Args:
            to: the phone number or contact name.
            text: the message.
        """
        self._record("send_sms", to=to, text=text)
        return {"status": "sent", "to": to}

    # -- code ------------------------------------------------------------------------------
    def run_python(self, code: str) -> dict[str, Any]:
        """Run a short Python expression and return its value.

        Args:
            code: one Python expression, such as "sorted([3, 1, 2])".
        """
        self._record("run_python", code=code)
        return {"value": repr(_evaluate(ast.parse(code, mode="eval").body)), "exit_code": 0}

    # -- builds ----------------------------------------------------------------------------
    def build_status(self, build_id: str) -> dict[str, Any]:
        """The state of a CI build: running (with its progress), passed or failed.

        Args:
            build_id: the build's id, such as "b-1042".
        """
        self._record("build_status", build_id=build_id)
        state, progress = self._build_states.pop(0)
        return {"build": build_id, "state": state, "progress": progress}

    def wait(self, seconds: int) -> dict[str, Any]:
        """Wait before the next step (to poll a status again later).

        Args:
            seconds: how long.
        """
        self._record("wait", seconds=seconds)
        return {"waited_s": seconds}

    # -- units and numbers -----------------------------------------------------------------
    def convert_units(self, value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
        """Convert a quantity between units of length, mass or time.

        Args:
            value: the quantity.
            from_unit: its unit (km, mi, kg, lb, h, min).
            to_unit: the unit wanted.
        """
        self._record("convert_units", value=value, from_unit=from_unit, to_unit=to_unit)
        factors = {("km", "mi"): 0.621371, ("kg", "lb"): 2.20462, ("h", "min"): 60.0}
        return {"value": round(value * factors[(from_unit, to_unit)], 3), "unit": to_unit}

    def average(self, numbers: list[float]) -> dict[str, Any]:
        """The mean of a list of numbers.

        Args:
            numbers: the numbers.
        """
        self._record("average", numbers=numbers)
        return {"count": len(numbers), "mean": round(sum(numbers) / len(numbers), 2)}

    def shipping_quote(self, weight_kg: float, destination: str) -> dict[str, Any]:
        """The price of shipping a parcel.

        Args:
            weight_kg: the parcel's weight in kilograms.
            destination: the destination city.
        """
        self._record("shipping_quote", weight_kg=weight_kg, destination=destination)
        return {"weight_kg": weight_kg, "destination": destination, "price_eur": 14.9}

    # -- utility ---------------------------------------------------------------------------
    def echo(self, message: str) -> str:
        """Return the message it is given, unchanged.

        Args:
            message: the message.
        """
        self._record("echo", message=message)
        return message


_OPERATORS: dict[type, Callable[..., Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FUNCTIONS: dict[str, Callable[..., Any]] = {"sorted": sorted, "sum": sum, "len": len, "max": max}


def _evaluate(node: ast.expr) -> Any:
    """A tiny evaluator: numbers, lists, arithmetic and a few built-ins."""
    match node:
        case ast.Constant(value=value):
            return value
        case ast.List(elts=items):
            return [_evaluate(item) for item in items]
        case ast.BinOp(left=left, op=op, right=right):
            return _OPERATORS[type(op)](_evaluate(left), _evaluate(right))
        case ast.Call(func=ast.Name(id=name), args=args):
            return _FUNCTIONS[name](*(_evaluate(arg) for arg in args))
    raise ValueError(f"cannot run {ast.dump(node)}")


TOOL_NAMES = tuple(
    name
    for name, value in vars(Toolbox).items()
    if callable(value) and not name.startswith("_") and name != "tools"
)


@dataclass(frozen=True)
class Category:
    description: str
    tools: tuple[str, ...]
    notes: str = ""


#: The office's categories, as a user would configure them.
CATEGORIES: dict[str, Category] = {
    "Finance": Category(
        "Bank balances, card transactions, company revenue and currency conversion.",
        ("get_balance", "list_transactions", "get_revenue", "convert_currency"),
    ),
    "Weather": Category("Current weather in a city.", ("get_weather",)),
    "Dates": Category(
        "Weekdays, date arithmetic and days between dates.",
        ("describe_date", "shift_date", "date_difference"),
        f"Dates are ISO YYYY-MM-DD. Today is {TODAY}.",
    ),
    "Files": Category(
        "List, read and search the files of the project.",
        ("list_files", "read_file", "search_files"),
    ),
    "Search": Category("Search the web and the news.", ("web_search", "search_news")),
    "Messaging": Category(
        "Team chat messages, email and text messages.",
        ("post_message", "send_email", "send_sms"),
    ),
    "Code": Category("Run short Python snippets.", ("run_python",)),
    "Builds": Category("CI builds: their status, and waiting for them.", ("build_status", "wait")),
    "Units": Category("Unit conversion and statistics of numbers.", ("convert_units", "average")),
    "Shipping": Category("Parcel shipping prices.", ("shipping_quote",)),
    "Utility": Category("Connection checks.", ("echo",)),
}


def guarded(profile: str | None) -> dict[str, Any]:
    """The keyword arguments that choose `profile` (none: the library's default)."""
    return {} if profile is None else {"guards": profile}


def category(
    name: str, toolbox: Toolbox, model: ScriptedModel, *, profile: str | None = None
) -> CategoryManager:
    """One of the office's categories, with its real tools and `model`."""
    spec = CATEGORIES[name]
    return CategoryManager(
        name,
        spec.description,
        toolbox.tools(spec.tools),
        model,
        tool_usage_notes=spec.notes,
        **guarded(profile),
    )


def router(
    toolbox: Toolbox, models: Mapping[str, ScriptedModel], *, profile: str | None = None
) -> MetaManager:
    """The office's router built in code: every category, each with its own model
    (`models[name]`, or one with no step, which fails the test's counts if it is asked)."""
    managers = [
        category(name, toolbox, models.get(name) or ScriptedModel([]), profile=profile)
        for name in CATEGORIES
    ]
    routing = RoutingConfig(max_categories=len(CATEGORIES))  # a capable model sees them all
    return MetaManager(managers, routing=routing, **guarded(profile))


def router_from_config(
    tmp_path: Path, toolbox: Toolbox, model: ScriptedModel, *, profile: str | None = None
) -> MetaManager:
    """The office's router from a config file, as `meta-tools serve` builds it: one
    model for every category (the config's profile, when given, in its `guards` section)."""
    data: dict[str, Any] = {
        name: {"description": spec.description, "tool_usage_notes": spec.notes, "tools": spec.tools}
        for name, spec in CATEGORIES.items()
    }
    if profile is not None:
        data["guards"] = {"profile": profile}
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return MetaManager.from_config(path, tools=toolbox.tools(TOOL_NAMES), model=model)


def agent(
    main: ScriptedModel,
    meta: MetaManager,
    *,
    instructions: str | None = None,
    profile: str | None = None,
) -> MainAgent:
    """A main agent over `meta`, with the default instructions unless given."""
    extra: dict[str, Any] = guarded(profile)
    if instructions is not None:
        extra["instructions"] = instructions
    return MainAgent(main, meta, **extra)


@asynccontextmanager
async def served(meta: MetaManager) -> AsyncIterator[Client]:
    """An MCP client connected in memory to `meta` served as an MCP server."""
    async with meta, Client(build_server(meta), mode="auto") as client:
        yield client


# -- scripts --------------------------------------------------------------------------------
def calls(*made: tuple[str, dict[str, Any]]) -> AssistantTurn:
    """A model turn that makes these tool calls (in one reply)."""
    return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=args) for name, args in made])


def answer(text: str) -> AssistantTurn:
    return AssistantTurn(text=text)


def task(objective: str, exact_input: str) -> dict[str, str]:
    """A category call's arguments."""
    return {"objective": objective, "exact_input": exact_input}


def used_up(model: ScriptedModel, requests: int) -> None:
    """The model was asked exactly `requests` times, and its whole script was used."""
    assert (len(model.requests), model.remaining) == (requests, 0)


def executions(result: CategoryResult) -> list[tuple[str, Any, bool]]:
    """What a category result says ran: (tool, arguments, ok) of each execution."""
    return [(e.tool, e.arguments, e.ok) for e in result.executions]


def in_any_order(ran: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Tool calls made in parallel, in an order of their own."""
    return sorted(json.dumps(call, sort_keys=True) for call in ran)


def categories_asked(meta: MetaManager) -> dict[str, int]:
    """How many requests each category's model got, for the categories that were asked."""
    asked = {m.name: len(m.model.requests) for m in meta.categories}  # type: ignore[attr-defined]
    return {name: count for name, count in asked.items() if count}
