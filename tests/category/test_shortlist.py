"""The tool shortlist: large categories offer each LLM call only the best matches."""

from __future__ import annotations

import json

import pytest

from meta_tools.category.manager import CategoryManager
from meta_tools.category.shortlist import (
    Bm25Index,
    ServiceIndex,
    Shortlist,
    alternate,
    analyze,
    service,
    tool_document,
    tool_terms,
)
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.guards import Guards
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.llm.openai_tools import openai_tool
from meta_tools.router.manager import MetaManager
from meta_tools.tools import BaseTool, FunctionTool

pytestmark = pytest.mark.anyio

TOPICS = {
    "get_weather_forecast": "Weather forecast for a city: temperature, rain and wind.",
    "convert_currency": "Convert an amount of money from one currency to another.",
    "search_flights": "Search flights between two airports on a date.",
    "book_hotel_room": "Book a hotel room in a city for given nights.",
    "translate_text": "Translate text from one language into another language.",
    "get_stock_quote": "Latest stock price quote for a ticker symbol.",
    "send_email": "Send an email message to a recipient address.",
    "create_calendar_event": "Create a calendar event with a title and a start time.",
    "geocode_address": "Turn a street address into latitude and longitude.",
    "shorten_url": "Shorten a long web URL into a short link.",
    "count_words": "Count the words in a text.",
    "generate_qr_code": "Generate a QR code image for a text or URL.",
}


def make_tool(name: str, description: str) -> BaseTool:
    def run(query: str) -> str:
        return f"{name}: {query}"

    return FunctionTool(name, run, description=description)


def catalog() -> list[BaseTool]:
    return [make_tool(name, text) for name, text in TOPICS.items()]


def offered(request: ChatRequest) -> list[str]:
    return [t.name for t in request.tools][:-2]  # without the control tools


def call(name: str) -> AssistantTurn:
    return AssistantTurn(tool_calls=[ToolCall(name=name, arguments={"query": "x"})])


def test_analyze_splits_snake_and_camel_case_drops_stopwords_and_stems() -> None:
    assert analyze("getWeatherForecast for the next_days of GUIDs") == [
        "get",
        "weather",
        "forecast",
        "next",
        "day",
        "guid",
    ]


def test_analyze_turns_chinese_text_into_characters_and_bigrams() -> None:
    assert analyze("搜索 bing") == ["搜", "索", "搜索", "bing"]


def test_analyze_reads_every_script_and_drops_accents() -> None:
    assert analyze("Прогноз ПОГОДЫ") == ["прогноз", "погоды"]
    assert analyze("Ελληνικά νέα") == ["ελληνικα", "νεα"]
    assert analyze("Wetter für Köln, Straße") == ["wetter", "fur", "koln", "strass"]
    assert analyze("Café") == analyze("cafe")
    assert analyze("서울 날씨") == ["서", "울", "서울", "날", "씨", "날씨"]


def test_a_tool_described_in_another_script_is_found() -> None:
    tools = [
        make_tool("kurs", "Курс валюты к рублю."),
        make_tool("wetter", "Wettervorhersage für eine Stadt."),
        make_tool("pogoda", "Прогноз погоды для города: температура и осадки."),
    ]
    shortlist = Shortlist(tools, max_tools=1)
    assert tools[shortlist.rank("Какой прогноз погоды в Москве?")[0]].name == "pogoda"
    assert tools[shortlist.rank("Wettervorhersage fur Munchen")[0]].name == "wetter"


def test_bm25_ranks_the_tool_whose_words_match_first() -> None:
    tools = catalog()
    shortlist = Shortlist(tools, max_tools=3)
    ranked = [tools[i].name for i in shortlist.rank("What will the weather be in Oslo?")]
    assert ranked[0] == "get_weather_forecast"
    ranked = [tools[i].name for i in shortlist.rank("please translate this sentence")]
    assert ranked[0] == "translate_text"


async def test_a_category_over_the_limit_offers_pinned_tools_then_the_best_matches() -> None:
    model = ScriptedModel([call("convert_currency"), AssistantTurn(text="12 EUR")])
    category = CategoryManager(
        "Everything",
        "All sorts of tools.",
        catalog(),
        model,
        max_tools_per_prompt=3,
        pinned=["count_words"],
    )
    result = await category.run("Convert money to another currency", "10 USD to EUR")
    assert result.status == "success"
    first, second = model.requests
    assert offered(first)[0] == "count_words"
    assert "convert_currency" in offered(first)
    assert len(offered(first)) == 3
    assert offered(second) == offered(first)  # the same list, in the same order, every round


async def test_a_tool_used_in_the_run_stays_offered_even_if_it_ranks_low() -> None:
    model = ScriptedModel(
        [call("shorten_url"), call("get_weather_forecast"), AssistantTurn(text="done")]
    )
    category = CategoryManager("All", "All tools.", catalog(), model, max_tools_per_prompt=2)
    await category.run("Weather forecast", "Oslo")
    first, second, _ = model.requests
    assert "shorten_url" not in offered(first)
    assert "shorten_url" in offered(second)
    assert "get_weather_forecast" in offered(second)


async def test_a_category_under_its_limits_offers_every_tool_and_builds_no_index() -> None:
    model = ScriptedModel([AssistantTurn(text="nothing to do")])
    tools = catalog()
    category = CategoryManager("All", "All tools.", tools, model, max_tools_per_prompt=50)
    assert category.shortlist is None
    await category.run("Anything", "x")
    assert offered(model.requests[0]) == [t.name for t in tools]


async def test_the_index_is_built_once_per_category_not_per_call() -> None:
    model = ScriptedModel.from_function(lambda r: AssistantTurn(text="no"))
    category = CategoryManager("All", "All tools.", catalog(), model, max_tools_per_prompt=4)
    assert category.shortlist is not None
    index = category.shortlist.index
    for objective in ("Weather forecast", "Send an email", "Book a hotel"):
        await category.run(objective, "x")
    assert category.shortlist.index is index
    assert isinstance(index, Bm25Index) and len(index) == len(TOPICS)


async def test_no_call_sees_more_characters_of_tools_than_the_budget() -> None:
    model = ScriptedModel.from_function(lambda r: AssistantTurn(text="no"))
    tools = catalog()
    budget = 700
    category = CategoryManager(
        "All", "All tools.", tools, model, max_tools_per_prompt=10, max_tool_chars_per_prompt=budget
    )
    await category.run("Weather forecast and stock price and flights", "x")
    schemas = model.requests[0].tools[:-2]
    assert 1 <= len(schemas) < 10
    assert sum(len(json.dumps(openai_tool(s), ensure_ascii=False)) for s in schemas) <= budget


async def test_abstain_declines_with_no_suitable_tool_without_calling_the_model() -> None:
    model = ScriptedModel([])
    category = CategoryManager(
        "Travel", "Travel tools.", catalog(), model, max_tools_per_prompt=3, abstain_below=0.5
    )
    result = await category.run("Compose a sonnet about autumn leaves", "melancholic tone")
    assert (result.status, result.usage.llm_calls, result.executions) == (
        "no_suitable_tool",
        0,
        [],
    )
    assert result.summary == (
        "No tool of the 'Travel' category matches this objective: the best matches cover 0% "
        "of its key words, below the 50% threshold."
    )
    assert result.suggestion is not None and "right category" in result.suggestion
    assert model.requests == []


async def test_a_category_with_no_tools_and_a_threshold_declines_instead_of_failing() -> None:
    # An MCP server can list no tools (or only task-only ones, which are left out).
    model = ScriptedModel([])
    category = CategoryManager("Empty", "Nothing yet.", [], model, abstain_below=0.3)
    result = await category.run("Book a hotel room", "Rome")
    assert (result.status, model.requests) == ("no_suitable_tool", [])
    assert list(Bm25Index([]).scores("hotel")) == []


async def test_abstain_keeps_a_matching_objective_and_offers_pinned_tools_otherwise() -> None:
    model = ScriptedModel.from_function(lambda r: AssistantTurn(text="no"))
    category = CategoryManager(
        "Travel",
        "Travel tools.",
        catalog(),
        model,
        max_tools_per_prompt=3,
        abstain_below=0.5,
        pinned=["count_words"],
    )
    await category.run("Compose a sonnet about autumn leaves", "melancholic tone")
    await category.run("Book a hotel room", "Rome, two nights")
    assert offered(model.requests[0]) == ["count_words"]
    assert "book_hotel_room" in offered(model.requests[1])


def test_a_pinned_tool_that_is_not_in_the_category_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="pinned tool 'nope'"):
        CategoryManager(
            "All",
            "All tools.",
            catalog(),
            ScriptedModel([]),
            pinned=["nope"],
            max_tools_per_prompt=2,
        )


def test_the_config_sets_the_limits_pins_and_threshold_of_each_category() -> None:
    config = MetaToolsConfig.from_data(
        {
            "defaults": {"max_tools_per_prompt": 4, "abstain_below": 0.2},
            "Travel": {
                "description": "Trips.",
                "tools": ["*"],
                "pinned": ["search_flights"],
                "max_tool_chars_per_prompt": 5000,
            },
        }
    )
    meta = MetaManager.from_config(config, tools=catalog(), model=ScriptedModel([]))
    shortlist = meta.get_category("travel").shortlist
    assert shortlist is not None
    assert (
        shortlist.max_tools,
        shortlist.max_chars,
        shortlist.pinned,
        shortlist.abstain_below,
    ) == (4, 5000, ["search_flights"], 0.2)


async def test_the_user_s_request_brings_its_best_match_beside_the_objective_s() -> None:
    """A small main agent's objective drops the words that name the tool: the request has them."""
    model = ScriptedModel([AssistantTurn(text="no")] * 2)
    category = CategoryManager("All", "All tools.", catalog(), model, max_tools_per_prompt=2)
    request = "Give me a short link for my trip page; also what's the weather"
    await category.run("Weather forecast", "Oslo")
    await category.run("Weather forecast", "Oslo", request=request)
    alone, helped = (offered(r) for r in model.requests)
    assert "shorten_url" not in alone
    assert helped == ["shorten_url", "get_weather_forecast"]  # each keeps its best, request first


def test_versions_and_initialisms_are_kept_whole() -> None:
    assert tool_terms("Currency_Converter_v3__convert 2 EUR, my K/D and P/E") == [
        "currenc", "convert", "convert", "2", "eur", "v3", "kd", "pe",
    ]  # fmt: skip
    assert tool_terms("/v1/youtube/summarize Analyze_V2") == [
        "youtub",
        "summar",
        "analyz",
        "v1",
        "v2",
    ]
    assert tool_terms("mp3 to v2ray") == analyze("mp3 to v2ray")  # no version: a word goes on
    assert (service("Currency_Converter_v2__Convert"), service("convert")) == (
        "Currency_Converter_v2",
        "",
    )


NEIGHBOURS = {
    "Currency_Converter_v2__Convert": "Convert from one currency to another.",
    "Currency_Converter_v3__converter": "Currency conversion between currencies.",
    "Currency_Converter_v3__currencies": "All supported currencies.",
    "Password_Generator__generate_password": "Generate a random password of a given length.",
    "Game_Stats__kd_calculator": "Calculates a kd (kill death ratio).",
    "Game_Stats__kda_calculator": "Calculates a kda (kill + assists death ratio).",
}


def neighbours() -> list[BaseTool]:
    return [*catalog(), *(make_tool(name, text) for name, text in NEIGHBOURS.items())]


def test_neighbours_are_told_apart_by_the_request_s_own_words() -> None:
    """A version or an initialism is the only word that tells these tools apart."""
    tools = neighbours()
    shortlist = Shortlist(tools, max_tools=1)

    def first(request: str, objective: str) -> str:
        return shortlist.select(objective, "", request=request).tools[0].name

    # `v2` read as `v` and `2` matched the amount: the v2 converter came first.
    request = "Convert 2 EUR to USD with Currency Converter v3"
    assert first(request, "Convert currency") == "Currency_Converter_v3__converter"
    request = "Make me a password, and what is my K/D? 10 kills, 4 deaths"
    assert first(request, "Calculate the ratio") == "Game_Stats__kd_calculator"
    assert first("What is my KDA?", "Calculate the ratio") == "Game_Stats__kda_calculator"


def test_a_tool_with_thin_text_is_found_through_its_service() -> None:
    tools = [
        *catalog(),
        make_tool("Waktu_Solat__solat_time", "Prayer times of a zone on a day."),
        make_tool("Waktu_Solat__solat_list", "List of zones in each state, with their codes."),
        make_tool("World_Clock__time_zones", "List of time zones and their offsets."),
    ]
    query = "I need the prayer times in Penang: which zones are there?"
    words_only = Bm25Index([tool_document(t) for t in tools], terms=tool_terms)
    by_service = ServiceIndex(tools)
    plain, smoothed = (Shortlist(tools, max_tools=3, index=i) for i in (words_only, by_service))
    assert "Waktu_Solat__solat_list" not in [t.name for t in plain.select(query, "").tools]
    assert [t.name for t in smoothed.select(query, "").tools] == [
        "Waktu_Solat__solat_time",
        "World_Clock__time_zones",
        "Waktu_Solat__solat_list",
    ]
    assert isinstance(Shortlist(tools).index, ServiceIndex)


def test_tools_without_a_service_are_ranked_by_their_own_words() -> None:
    tools = catalog()
    query = "Translate this weather forecast into French"
    own = Bm25Index([tool_document(t) for t in tools], terms=tool_terms).scores(query)
    assert list(ServiceIndex(tools).scores(query)) == list(own)
    assert list(ServiceIndex([]).scores(query)) == []


def test_two_rankings_take_turns_and_keep_each_item_once() -> None:
    assert alternate([0, 1, 2, 3], [2, 3, 0, 1]) == [0, 2, 1, 3]
    assert alternate([], []) == []


# -- guard few_tools: a small model is offered the best 2 ---------------------------------
MONEY = {
    "convert_currency": "Convert an amount of money from one currency to another.",
    "currency_rates": "Today's exchange rates of a currency.",
    "currency_history": "Past exchange rates of a currency.",
    "currency_symbols": "The symbol and name of each currency.",
    "crypto_currency_price": "The price of a crypto currency.",
    "money_transfer_fee": "The fee of sending money abroad.",
    "bank_holidays": "Bank holidays of a country.",
}


def money() -> list[BaseTool]:
    return [make_tool(name, text) for name, text in {**MONEY, **TOPICS}.items()]


async def test_a_small_model_is_offered_the_two_best_tools_and_a_capable_one_all() -> None:
    everything = [t.name for t in money()]
    for guards, expected in (("small", 2), ("capable", len(everything))):
        model = ScriptedModel([call("convert_currency"), AssistantTurn(text="12 EUR")])
        category = CategoryManager("All", "All tools.", money(), model, guards=guards)
        assert category.shortlist is None  # 18 tools: under the category's own limit
        await category.run("Convert money to another currency", "10 USD to EUR")
        first = offered(model.requests[0])
        assert len(first) == expected, guards
        # The best match first; a capable model gets every tool, in the config's order.
        assert first[0] == "convert_currency" if guards == "small" else first == everything


async def test_a_small_model_is_offered_a_category_of_five_tools_whole() -> None:
    """A small category's tools differ by what they do (the demo's dates category has 5):
    its model sees them all, as a capable one does."""
    five = [make_tool(name, text) for name, text in list(MONEY.items())[:5]]
    model = ScriptedModel([call("convert_currency"), AssistantTurn(text="12 EUR")])
    category = CategoryManager("Money", "Money tools.", five, model, guards="small")
    await category.run("Convert money to another currency", "10 USD to EUR")
    assert offered(model.requests[0]) == [t.name for t in five]


async def test_a_small_model_keeps_the_category_s_lower_limit_and_its_index() -> None:
    model = ScriptedModel.from_function(lambda r: AssistantTurn(text="no"))
    category = CategoryManager(
        "All", "All tools.", money(), model, max_tools_per_prompt=1, guards="small"
    )
    base = category.shortlist
    assert base is not None
    await category.run("Currency exchange rates", "USD")
    await category.run("Convert money to another currency", "10 USD to EUR")
    assert all(len(offered(request)) == 1 for request in model.requests)
    assert category._few is not None and category._few[1].index is base.index


async def test_a_tool_a_small_model_used_stays_offered_beyond_the_two() -> None:
    usd = {"query": "USD"}  # a value the task gave: no guard holds the call
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="shorten_url", arguments=usd)]),
            AssistantTurn(tool_calls=[ToolCall(name="currency_rates", arguments=usd)]),
            AssistantTurn(text="done"),
        ]
    )
    # The first result is not handed up as the answer, so that a second round runs.
    guards = Guards("small", disable=["hand_up_result"])
    category = CategoryManager("All", "All tools.", money(), model, guards=guards)
    await category.run("Currency exchange rates today", "USD")
    first, second, _ = model.requests
    assert len(offered(first)) == 2 and "shorten_url" not in offered(first)
    assert "shorten_url" in offered(second) and "currency_rates" in offered(second)


async def test_a_small_model_is_offered_every_tool_when_the_task_names_none_of_their_words() -> (
    None
):
    model = ScriptedModel.from_function(lambda r: AssistantTurn(text="no"))
    category = CategoryManager("All", "All tools.", catalog(), model, guards="small")
    await category.run("Let everyone know lunch is here", "lunch is here")
    assert offered(model.requests[0]) == list(TOPICS)


def written(name: str, **arguments: str) -> AssistantTurn:
    """A call written as text, as the 1.5B writes its calls (a JSON fence)."""
    call = json.dumps({"name": name, "arguments": arguments})
    return AssistantTurn(text=f"```json\n{call}\n```")


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("currency_history", "currency_history"),
        ("Currency-History", "currency_history"),
        ("crypto_currency_prices", "crypto_currency_price"),
    ],
)
async def test_a_call_written_to_a_tool_of_the_category_not_offered_runs(
    name: str, tool: str
) -> None:
    """Offered two, the 1.5B wrote a call to a third (`fetch_weather_data`, and
    `GET_quotes_by_year` for `GET_quote_by_Year`)."""
    model = ScriptedModel([written(name, query="USD"), AssistantTurn(text="done")])
    guards = Guards("small", disable=["hand_up_result"])
    category = CategoryManager("All", "All tools.", money(), model, guards=guards)
    result = await category.run("Convert money to another currency", "10 USD to EUR")
    first, second = model.requests
    assert tool not in offered(first) and len(offered(first)) == 2
    assert [(e.tool, e.arguments) for e in result.executions] == [(tool, {"query": "USD"})]
    assert tool in offered(second)  # used: offered from now on


async def test_a_call_written_to_a_name_the_category_lacks_is_answered_as_not_offered() -> None:
    model = ScriptedModel([written("fetch_weather_data", query="Oslo"), AssistantTurn(text="no")])
    category = CategoryManager("All", "All tools.", money(), model, guards="small")
    result = await category.run("Convert money to another currency", "10 USD to EUR")
    assert result.executions == []
    note = model.requests[1].messages[-1].content or ""
    assert "'fetch_weather_data' is not one of the offered tools" in note


async def test_a_capable_model_s_call_written_as_text_stays_its_answer() -> None:
    text = written("currency_history", query="USD")
    category = CategoryManager("All", "All tools.", money(), ScriptedModel([text]))
    result = await category.run("Convert money to another currency", "10 USD to EUR")
    assert result.executions == [] and result.summary == text.text
