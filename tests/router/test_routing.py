"""Routing at scale: the category ranking, the offered subset, the retry and the remainder."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from meta_tools import tool
from meta_tools.agent import CategoryReturned, MainAgent
from meta_tools.category.manager import CategoryManager
from meta_tools.category.result import CategoryResult
from meta_tools.category.task import read_task
from meta_tools.config import MetaToolsConfig, RoutingConfig
from meta_tools.exceptions import CategoryNotFoundError, ConfigError, ToolArgumentsError
from meta_tools.guards import Guards
from meta_tools.guards.findings import found_nothing
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall, ToolDefinition
from meta_tools.llm.recovery import RecoveringModel
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.router import manager as router_manager
from meta_tools.router.manager import ANY_CATEGORY, MetaManager, what_tools_do
from meta_tools.router.ranking import MAX_TEXT_CHARS, CategoryRanking
from meta_tools.serve.server import build_server
from meta_tools.support.terms import tool_words
from tests.guard_profiles import SMALL_EVERY_TURN
from tests.mcp.conftest import SAMPLING_TOOLS, ScriptedHost

pytestmark = pytest.mark.anyio


@tool
def track_parcel(tracking_number: str) -> str:
    """Track a parcel by its tracking number: where it is and when it arrives."""
    return f"parcel {tracking_number}: out for delivery"


@tool
def parcel_health() -> str:
    """Health of the parcel service."""
    return "ok"


@tool
def league_table(league: str) -> str:
    """The football league table: teams, points and goals."""
    return f"{league}: Arsenal first"


@tool
def match_score(team: str) -> str:
    """The score of a football team's last match."""
    return f"{team} 2-1"


@tool
def film_search(title: str) -> str:
    """Search a film by its title."""
    return f"{title} (1999)"


@tool
def forecast(city: str) -> str:
    """The weather forecast of a city: temperature and rain."""
    return f"{city}: 18 C, dry"


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


CATEGORIES = [
    ("Maths", "Arithmetic.", [add]),
    ("Parcels", "Deliveries and logistics.", [track_parcel, parcel_health]),
    ("Football", "Sport results.", [league_table, match_score]),
    ("Films", "Movies, cinemas and showtimes.", [film_search]),
    ("Weather", "Forecasts.", [forecast]),
]


def category_named(request: ChatRequest) -> str:
    """Which category a category-loop request belongs to (its selection prompt names it)."""
    system = request.messages[0].content
    return system.split('"')[1]


def world(
    model: ScriptedModel,
    *,
    max_categories: int = 2,
    retry_categories: int = 1,
    min_score_ratio: float = 0.0,
    guards: Guards | str = "capable",
) -> MetaManager:
    """The five categories over `model`; `guards=SMALL_EVERY_TURN` for what small models need."""
    managers = [CategoryManager(n, d, tools, model, guards=guards) for n, d, tools in CATEGORIES]
    routing = RoutingConfig(
        max_categories=max_categories,
        retry_categories=retry_categories,
        min_score_ratio=min_score_ratio,
    )
    return MetaManager(managers, routing=routing, guards=guards)


def has_results(request: ChatRequest) -> bool:
    """Whether a category-loop request comes after a round of tool calls."""
    return any(m.role == "tool" for m in request.messages)


def names(tools: list[dict[str, Any]]) -> list[str]:
    """The names of OpenAI functions (`MetaManager.openai_tools`)."""
    return [t["function"]["name"] for t in tools]


def offered(tools: list[ToolDefinition]) -> list[str]:
    """The names of the tools a request offered."""
    return [t.name for t in tools]


# -- the ranking ------------------------------------------------------------------------
def test_categories_are_ranked_through_their_tools_with_the_tools_that_matched() -> None:
    meta = world(ScriptedModel([]))
    ranked = meta.rank("Where is my parcel CA107? Track it please.")
    assert ranked[0].category.name == "Parcels"
    assert ranked[0].tools[0] == "track_parcel"
    assert ranked[0].score > ranked[1].score
    table = meta.rank("Show me the league table of the premier league")
    assert (table[0].category.name, table[0].tools[0]) == ("Football", "league_table")


def test_a_category_s_own_description_counts() -> None:
    # "movies" is in the Films description only, in none of its tools.
    ranked = world(ScriptedModel([])).rank("any good movies?")
    assert ranked[0].category.name == "Films"
    assert ranked[0].tools == ()


def test_a_category_scores_its_best_tool_and_a_quarter_of_its_second_best() -> None:
    meta = world(ScriptedModel([]))
    ranking = CategoryRanking(meta.categories)
    text = "parcel health, and track my parcel"

    def score(*left_out: str) -> float:
        ranked = ranking.rank(text, leave_out=left_out)
        return next(r.score for r in ranked if r.category.name == "Parcels")

    own = score("track_parcel", "parcel_health")  # the category's own text alone
    track, health = score("parcel_health") - own, score("track_parcel") - own
    assert track > 0 and health > 0 and track != health
    best, second = max(track, health), min(track, health)
    assert score() == pytest.approx(best + 0.25 * second + own, abs=1e-3)


def test_the_ranking_index_is_built_once_until_a_category_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: list[CategoryRanking] = []

    class CountedRanking(CategoryRanking):
        def __init__(self, categories: Sequence[CategoryManager]) -> None:
            super().__init__(categories)
            built.append(self)

    monkeypatch.setattr(router_manager, "CategoryRanking", CountedRanking)
    meta = world(ScriptedModel([]))
    meta.rank("track my parcel")
    meta.rank("the league table")
    assert len(built) == 1
    meta.get_category("films").set_tools([film_search, forecast])
    assert meta.rank("film search, forecast")[0].category.name == "Films"
    assert len(built) == 2


def test_a_text_nothing_matches_keeps_the_configured_order_with_zero_scores() -> None:
    ranked = world(ScriptedModel([])).rank("xyzzy plugh")
    assert [r.category.name for r in ranked] == [n for n, _, _ in CATEGORIES]
    assert {r.score for r in ranked} == {0.0}


def test_the_ranking_is_deterministic_and_reads_a_bounded_part_of_the_text() -> None:
    meta = world(ScriptedModel([]))
    text = "track my parcel " * 2000 + "football league table " * 2000
    assert len(text) > MAX_TEXT_CHARS
    first = [(r.category.name, r.score, r.tools) for r in meta.rank(text)]
    assert first == [(r.category.name, r.score, r.tools) for r in meta.rank(text)]
    assert first == [(r.category.name, r.score, r.tools) for r in meta.rank(text[:MAX_TEXT_CHARS])]
    assert first[0][0] == "Parcels"  # the football words lie beyond the bound


def test_the_ranking_follows_a_category_s_new_tools() -> None:
    meta = world(ScriptedModel([]))
    assert meta.rank("film search")[0].category.name == "Films"
    meta.get_category("weather").set_tools([forecast, film_search])
    ranked = meta.rank("the weather forecast, and a film search")
    assert ranked[0].category.name == "Weather"
    assert set(ranked[0].tools) == {"forecast", "film_search"}


# -- the offered subset ------------------------------------------------------------------
def test_tool_names_are_described_in_words() -> None:
    assert tool_words("ColorMe__RandomColorSet") == "random color set"
    assert tool_words("BMI_v2__Gives_the_BMI_when_you_Input") == "gives the bmi when you input"
    assert tool_words("track_parcel") == "track parcel"
    assert tool_words("getURLInfo-v2") == "get url info v 2"


def test_what_tools_do_is_said_in_words_grouped_by_their_server() -> None:
    """Seen with the 1.5B: asked for "a template from Nexweave", it was offered a category
    that "can: get all templates" and chose another; the server's name was left out."""
    names = [
        "Nexweave__Get_All_Templates",
        "track_parcel",
        "Nexweave__getTemplate",
        "Rijks-Museum__collection",
    ]
    assert what_tools_do(names) == (
        "Nexweave: get all templates, get template; track parcel; Rijks Museum: collection"
    )
    assert what_tools_do(["a__x", "a__x", "b"]) == "a: x; b"


def test_with_many_categories_a_request_is_offered_the_best_ones_in_rank_order() -> None:
    meta = world(ScriptedModel([]), max_categories=2)
    tools = meta.openai_tools("Track parcel CA107 and tell me where the parcel is")
    assert names(tools)[0] == "parcels" and len(tools) == 3
    assert names(tools)[-1] == ANY_CATEGORY
    # Its best tools in words, not as names a small model would call as its own tools.
    assert "It can: track parcel; parcel health." in tools[0]["function"]["description"]
    assert "track_parcel" not in json.dumps(tools)
    used = meta.openai_tools("Track parcel CA107", include=["weather"])
    assert names(used)[:1] == ["parcels"] and "weather" in names(used)
    # Without a request, or with few enough categories: every category, configured order.
    assert names(meta.openai_tools()) == ["maths", "parcels", "football", "films", "weather"]
    few = world(ScriptedModel([]), max_categories=5)
    assert ANY_CATEGORY not in names(few.openai_tools("Track parcel CA107"))


def test_only_categories_near_the_best_one_s_score_are_offered() -> None:
    """Seen with the 1.5B: roulette sent to the 2nd of 8 offered though the 1st scored 4x."""
    meta = world(ScriptedModel([]), max_categories=4, min_score_ratio=0.5)
    parcel = "Track parcel CA107 and tell me where the parcel is"
    ranked = meta.rank(parcel)
    assert ranked[1].score < 0.5 * ranked[0].score
    assert names(meta.openai_tools(parcel)) == ["parcels", ANY_CATEGORY]
    # A category the conversation used is still offered, in its rank order.
    used = names(meta.openai_tools(parcel, include=["maths", "films"]))
    assert used[0] == "parcels" and set(used[1:-1]) == {"maths", "films"}
    assert used[1:-1] == [r.category.slug for r in ranked if r.category.slug in {"maths", "films"}]
    # Nothing matches: every score is 0, and the first `max_categories` are offered.
    assert len(meta.openai_tools("xyzzy plugh")) == 4 + 1
    defaults = RoutingConfig()
    assert (defaults.max_categories, defaults.min_score_ratio, defaults.retry_categories) == (
        8,
        0.9,
        None,  # the guard profile decides: one retry under "small", none under "capable"
    )
    assert MetaManager([]).retry_categories == 0
    assert MetaManager([], guards=SMALL_EVERY_TURN).retry_categories == 1


async def test_any_category_runs_a_task_in_the_best_ranked_category_of_all() -> None:
    model = ScriptedModel.from_function(
        lambda request: (
            AssistantTurn(text=f"{category_named(request)} answered.")
            if has_results(request)
            else AssistantTurn(
                tool_calls=[ToolCall(name="league_table", arguments={"league": "premier league"})]
            )
        )
    )
    meta = world(model, max_categories=1)
    league = {"objective": "the league table", "exact_input": "premier league"}
    assert "football" not in names(meta.openai_tools("Track parcel CA107"))
    result = await meta.call_tool(ANY_CATEGORY, league)
    assert (result.category, result.status) == ("Football", "success")
    assert [e.tool for e in result.executions] == ["league_table"]
    assert meta.check_call(ANY_CATEGORY, league).category.name == "Football"
    with pytest.raises(CategoryNotFoundError, match="no category fits this task"):
        await meta.call_tool(ANY_CATEGORY, {"objective": "xyzzy", "exact_input": "plugh"})
    with pytest.raises(ToolArgumentsError, match="'exact_input' is required"):
        await meta.call_tool(ANY_CATEGORY, {"objective": "the league table"})


def asks_any_category_for_the_league(request: ChatRequest) -> AssistantTurn:
    """A main agent that sends the league table to `any_category`, then answers."""
    if request.messages[-1].role == "tool":
        return AssistantTurn(text="Arsenal are first.")
    call = {"objective": "League table", "exact_input": "premier league"}
    return AssistantTurn(tool_calls=[ToolCall(name=ANY_CATEGORY, arguments=call)])


def league_tables(request: ChatRequest) -> AssistantTurn:
    """Categories whose model calls `league_table`, then answers."""
    if has_results(request):
        return AssistantTurn(text="Arsenal first.")
    call = ToolCall(name="league_table", arguments={"league": "premier league"})
    return AssistantTurn(tool_calls=[call])


async def test_main_agent_offers_ranked_categories_reaches_others_and_keeps_those_it_used() -> None:
    main = ScriptedModel.from_function(asks_any_category_for_the_league)
    category_model = ScriptedModel.from_function(league_tables)
    agent = MainAgent(main, world(category_model, max_categories=1))
    assert await agent.ask("Track parcel CA107 where is my parcel") == "Arsenal are first."
    assert offered(main.requests[0].tools) == ["parcels", ANY_CATEGORY]
    assert [category_named(r) for r in category_model.requests] == ["Football", "Football"]
    reply = next(m for m in main.requests[1].messages if m.role == "tool")
    assert '"category":"Football"' in reply.content
    # The next message ranks parcels first again, and keeps football: the conversation used it.
    first = offered(agent.request_for("Where is my parcel CA107?").tools)
    assert first == ["parcels", "football", ANY_CATEGORY]


# -- retry in the next category ----------------------------------------------------------
def declining_in(*declining: str) -> ScriptedModel:
    """Categories named in `declining` decline; the others call their first tool, then answer."""

    def reply(request: ChatRequest) -> AssistantTurn:
        category = category_named(request)
        if has_results(request):
            return AssistantTurn(text=f"{category} answered.")
        if category in declining:
            call = ToolCall(name="decline", arguments={"reason": f"{category} has no such tool"})
            return AssistantTurn(tool_calls=[call])
        shown = [n for n in offered(request.tools) if n not in ("decline", "request_input")]
        arguments = {"league": "premier league"} if shown[0] == "league_table" else {}
        return AssistantTurn(tool_calls=[ToolCall(name=shown[0], arguments=arguments)])

    return ScriptedModel.from_function(reply)


LEAGUE = {"objective": "The league table", "exact_input": "football league: premier league"}


async def test_a_declined_call_runs_in_the_next_ranked_category() -> None:
    model = declining_in("Parcels")
    result = await world(model).call_tool("parcels", LEAGUE)
    assert (result.status, result.category, result.declined) == ("success", "Football", ["Parcels"])
    assert [e.tool for e in result.executions] == ["league_table"]
    assert result.usage.llm_calls == 3  # the decline, then the call and the answer
    assert json.loads(result.for_agent())["declined"] == ["Parcels"]


async def test_a_decline_written_as_the_prompt_words_after_a_failed_call_runs_the_next_category() -> (
    None
):
    """Seen with the 1.5B on demo task x5: `calculate` refused a date, the model replied
    "call decline" as text, and the run ended failed where the dates category could go on."""

    def reply(request: ChatRequest) -> AssistantTurn:
        if category_named(request) == "Parcels":
            if has_results(request):
                return AssistantTurn(text="call decline")
            call = ToolCall(name="track_parcel", arguments={"league": "premier league"})
            return AssistantTurn(tool_calls=[call])
        if has_results(request):
            return AssistantTurn(text="Football answered.")
        call = ToolCall(name="league_table", arguments={"league": "premier league"})
        return AssistantTurn(tool_calls=[call])

    meta = world(ScriptedModel.from_function(reply), guards=SMALL_EVERY_TURN)
    result = await meta.call_tool("parcels", LEAGUE)
    assert (result.status, result.category, result.declined) == ("success", "Football", ["Parcels"])
    # What the declining category ran stays in the record, before the retry's calls.
    assert [(e.tool, e.ok) for e in result.executions] == [
        ("track_parcel", False),
        ("league_table", True),
    ]


async def test_the_retry_is_bounded_and_a_task_nobody_can_do_ends_declined() -> None:
    everyone = ("Maths", "Parcels", "Football", "Films", "Weather")
    result = await world(declining_in(*everyone)).call_tool("parcels", LEAGUE)
    assert (result.status, result.category, result.declined) == (
        "no_suitable_tool",
        "Football",
        ["Parcels"],
    )
    # Two further categories at most, and only ones that match the call.
    both = {"objective": "League table and weather forecast", "exact_input": "premier league"}
    twice = await world(declining_in(*everyone), retry_categories=2).call_tool("parcels", both)
    assert (twice.category, twice.declined) == ("Weather", ["Parcels", "Football"])
    three = await world(declining_in(*everyone), retry_categories=3).call_tool("parcels", both)
    assert (three.category, three.declined) == ("Weather", ["Parcels", "Football"])
    never = await world(declining_in(*everyone), retry_categories=0).call_tool("parcels", LEAGUE)
    assert (never.category, never.declined) == ("Parcels", None)


async def test_no_retry_in_a_category_that_matches_nothing_of_the_call() -> None:
    model = declining_in("Parcels")
    task = {"objective": "xyzzy", "exact_input": "plugh"}
    result = await world(model).call_tool("parcels", task)
    assert (result.status, result.category, result.declined) == (
        "no_suitable_tool",
        "Parcels",
        None,
    )
    assert len(model.requests) == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_mcp_host_gets_the_retry_through_sampling_in_both_protocol_eras(mode: str) -> None:
    """Under 2026-07-28 the retried run waits for the host too: its state names the decline."""
    managers = [CategoryManager(n, d, t, SamplingChatModel()) for n, d, t in CATEGORIES]
    meta = MetaManager(managers, routing=RoutingConfig(max_categories=2), guards=SMALL_EVERY_TURN)
    host = ScriptedHost(
        [
            ("decline", {"reason": "no football tool here"}),
            ("league_table", {"league": "premier league"}),
            "Arsenal are first.",
        ]
    )
    client = Client(
        build_server(meta), mode=mode, sampling_callback=host, sampling_capabilities=SAMPLING_TOOLS
    )
    async with meta, client:
        listed = await client.list_tools()
        result = await client.call_tool("parcels", LEAGUE)
    # A host sends no request with its list: it lists every category, however many.
    assert [t.name for t in listed.tools] == ["maths", "parcels", "football", "films", "weather"]
    content = result.structured_content or {}
    assert result.is_error is False
    assert (content["category"], content["declined"], content["status"]) == (
        "Football",
        ["Parcels"],
        "success",
    )
    assert '"Football"' in host.system_prompts()[1]
    assert content["usage"]["llm_calls"] == 3  # the declined run counts under both eras


# -- the rest of a two-part request -------------------------------------------------------
async def test_a_category_that_did_its_part_returns_the_rest_and_the_main_agent_sends_it_on() -> (
    None
):
    def categories(request: ChatRequest) -> AssistantTurn:
        category = category_named(request)
        if category == "Maths" and has_results(request):
            call = ToolCall(name="decline", arguments={"reason": "the weather forecast for Paris"})
            return AssistantTurn(tool_calls=[call])
        if category == "Maths":
            return AssistantTurn(tool_calls=[ToolCall(name="add", arguments={"a": 2, "b": 3})])
        if has_results(request):
            return AssistantTurn(text="Paris: 18 C, dry.")
        return AssistantTurn(tool_calls=[ToolCall(name="forecast", arguments={"city": "Paris"})])

    task = {"objective": "Add 2 and 3, and the weather in Paris", "exact_input": "2, 3, Paris"}
    main = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="maths", arguments=task)]),
            AssistantTurn(text="5, and Paris is dry at 18 C."),
        ]
    )
    categories_model = ScriptedModel.from_function(categories)
    meta = world(categories_model, max_categories=8, guards=SMALL_EVERY_TURN)
    maths = await meta.call_tool("maths", task)
    assert (maths.status, maths.remainder) == ("success", "the weather forecast for Paris")
    assert [e.tool for e in maths.executions] == ["add"]

    answer = await MainAgent(main, meta).ask("What is 2 + 3, and the weather in Paris?")
    assert answer == "5, and Paris is dry at 18 C."
    seen = main.requests[1].messages
    follow = [m for m in seen if m.role == "assistant" and m.tool_calls][-1].tool_calls[0]
    assert follow.name == "weather"
    assert follow.arguments == {
        "objective": "the weather forecast for Paris",
        "exact_input": "2, 3, Paris",
    }
    # The rest may need what was found: its category reads it beside the message, as data.
    weather = next(r for r in categories_model.requests if category_named(r) == "Weather")
    assert '<tool_result tool="Maths" status="ok">\nadd: 5.0\n</tool_result>' in str(
        weather.messages[-1].content
    )
    reply = next(m for m in seen if m.tool_call_id == follow.id)
    assert "18 C, dry" in reply.content
    assert seen[-1].content == Guards("small").text(
        "each_result"
    )  # two results in the round: each is asked for


async def test_the_rest_is_sent_on_once() -> None:
    """Weather does its part of the rest and leaves a film search: that is not sent on
    again, so a chain of partial categories cannot run the whole router."""

    def categories(request: ChatRequest) -> AssistantTurn:
        category = category_named(request)
        if category == "Films":
            return AssistantTurn(
                tool_calls=[ToolCall(name="film_search", arguments={"title": "x"})]
            )
        first = {"Maths": ("add", {"a": 2, "b": 3}), "Weather": ("forecast", {"city": "Paris"})}
        if not has_results(request):
            name, arguments = first[category]
            return AssistantTurn(tool_calls=[ToolCall(name=name, arguments=arguments)])
        rest = {"Maths": "the weather forecast for Paris", "Weather": "a film search for Heat"}
        return AssistantTurn(
            tool_calls=[ToolCall(name="decline", arguments={"reason": rest[category]})]
        )

    task = {"objective": "Add 2 and 3, Paris weather, a film", "exact_input": "2, 3, Paris, Heat"}
    main = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="maths", arguments=task)]),
            AssistantTurn(text="5; Paris is dry."),
        ]
    )
    model = ScriptedModel.from_function(categories)
    answer = await MainAgent(main, world(model, max_categories=8), guards=SMALL_EVERY_TURN).ask(
        "What is 2 + 3, the weather in Paris, and find the film Heat?"
    )
    assert answer == "5; Paris is dry."
    assert [category_named(r) for r in model.requests] == ["Maths"] * 2 + ["Weather"] * 2
    told = [m.content for m in main.requests[1].messages if m.role == "tool"]
    assert len(told) == 2 and "a film search for Heat" in told[1]


def maths_adds_then_hands_on(adder: str) -> ScriptedModel:
    """Maths calls `adder` on 2 and 3, then declines the rest (the Paris weather); every
    other category declines."""

    def categories(request: ChatRequest) -> AssistantTurn:
        if category_named(request) != "Maths":
            return AssistantTurn(tool_calls=[ToolCall(name="decline", arguments={"reason": "no"})])
        if has_results(request):
            call = ToolCall(name="decline", arguments={"reason": "the weather forecast for Paris"})
            return AssistantTurn(tool_calls=[call])
        return AssistantTurn(tool_calls=[ToolCall(name=adder, arguments={"a": 2, "b": 3})])

    return ScriptedModel.from_function(categories)


def maths_then_five(exact_input: str) -> ScriptedModel:
    """A main agent that sends the two-part task to Maths, then answers "5"."""
    task = {"objective": "Add 2 and 3, and the weather in Paris", "exact_input": exact_input}
    call = ToolCall(name="maths", arguments=task)
    return ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text="5")])


@tool
def add_goals(a: float, b: float) -> str:
    """Add two numbers of goals."""
    return f"{a + b} goals: football league table, match score, team points"


async def test_what_the_first_part_found_does_not_steer_where_the_rest_is_retried() -> None:
    """The rest goes to Weather with what Maths found, which is all football words; Weather
    declines, and the retry ranks the rest alone: no category matches it, so Football
    (which the found text would pick) never runs."""

    main = maths_then_five("2, 3, Paris")
    model = maths_adds_then_hands_on("add_goals")
    tools = {"Maths": [add_goals]}
    managers = [CategoryManager(n, d, tools.get(n, t), model) for n, d, t in CATEGORIES]
    meta = MetaManager(managers, routing=RoutingConfig(max_categories=8, min_score_ratio=0.0))
    assert meta.rank(add_goals(2, 3))[0].category.name == "Football"  # what the text says
    await MainAgent(main, meta, guards=SMALL_EVERY_TURN).ask(
        "What is 2 + 3, and the weather in Paris?"
    )
    assert [category_named(r) for r in model.requests] == ["Maths", "Maths", "Weather"]


async def test_the_rest_never_goes_back_to_the_category_that_handed_it_on() -> None:
    """Weather declines the rest; the retry's next-ranked category for it is Maths, whose
    tool already ran: it must not run again (a sent email would be sent twice)."""

    main = maths_then_five("add 2, 3; Paris")
    model = maths_adds_then_hands_on("add")
    meta = world(model, max_categories=8)
    results: list[CategoryResult] = []

    async def keep(step: object) -> None:
        if isinstance(step, CategoryReturned) and step.result is not None:
            results.append(step.result)

    await MainAgent(main, meta, guards=SMALL_EVERY_TURN).ask(
        "What is 2 + 3, and the weather in Paris?", on_step=keep
    )
    assert [(r.category, r.status) for r in results] == [
        ("Maths", "success"),
        ("Weather", "no_suitable_tool"),
    ]
    assert sum(e.tool == "add" for r in results for e in r.executions) == 1
    assert [category_named(r) for r in model.requests].count("Maths") == 2


# -- calls the main agent wrote in another shape -----------------------------------------
def test_a_tool_is_found_by_its_name_in_any_spelling_and_only_when_one_category_holds_it() -> None:
    meta = world(ScriptedModel([]))
    for written in ("track_parcel", "TrackParcel", "track parcel", "Parcels__track-parcel"):
        holder = meta.tool_holder(written)
        assert holder is not None and holder.name == "Parcels", written
    assert meta.tool_holder("track_the_parcel") is None
    meta.get_category("weather").set_tools([forecast, track_parcel])
    assert meta.tool_holder("track_parcel") is None  # two categories hold it: no guess


def _main_calls(call: ToolCall) -> ScriptedModel:
    return ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text="Done.")])


VALUES = {"track_parcel": {"tracking_number": "CA107"}, "forecast": {"city": "Paris"}}


def _category_run() -> ScriptedModel:
    """Every category calls its first tool (with the test's values), then answers."""

    def reply(request: ChatRequest) -> AssistantTurn:
        if has_results(request):
            return AssistantTurn(text="Found it.")
        shown = [n for n in offered(request.tools) if n not in ("decline", "request_input")]
        arguments = VALUES.get(shown[0], {})
        return AssistantTurn(tool_calls=[ToolCall(name=shown[0], arguments=arguments)])

    return ScriptedModel.from_function(reply)


@pytest.mark.parametrize("name", ["track_parcel", "TrackParcel", "track parcel"])
async def test_a_tool_called_by_name_runs_in_the_category_that_holds_it(name: str) -> None:
    question = "Where is my parcel CA107?"
    call = ToolCall(name=name, arguments={"tracking_number": "CA107"})
    main, categories = _main_calls(call), _category_run()
    steps: list[Any] = []

    async def sink(step: Any) -> None:
        steps.append(step)

    agent = MainAgent(main, world(categories, max_categories=8, guards=SMALL_EVERY_TURN))
    assert await agent.ask(question, on_step=sink) == "Done."
    called = [s.call for s in steps if type(s).__name__ == "CategoryCalled"]
    assert [c.name for c in called] == ["parcels"]
    assert called[0].id == call.id
    assert called[0].arguments == {
        "objective": question,
        "exact_input": f'{name} {{"tracking_number": "CA107"}}',
    }
    assert category_named(categories.requests[0]) == "Parcels"
    assert "Exact input: " + called[0].arguments["exact_input"] in (
        categories.requests[0].messages[1].content
    )
    reply = next(m for m in main.requests[1].messages if m.role == "tool")
    assert reply.tool_call_id == call.id and "Found it." in reply.content


async def test_a_category_called_with_a_tool_s_arguments_gets_them_as_its_input() -> None:
    question = "Forecast for Paris please"
    calls = [
        ToolCall(name="weather", arguments={"city": "Paris"}),
        ToolCall(name="Weather", arguments={"objective": "", "exact_input": {"city": "Paris"}}),
        ToolCall(name="weather", arguments={"objective": "The forecast"}),
    ]
    expected = [
        {"objective": question, "exact_input": '{"city": "Paris"}'},
        {"objective": question, "exact_input": '{"city": "Paris"}'},
        {"objective": "The forecast", "exact_input": question},
    ]
    for call, arguments in zip(calls, expected, strict=True):
        categories = _category_run()
        main = _main_calls(call)
        meta = world(categories, max_categories=8, guards=SMALL_EVERY_TURN)
        assert await MainAgent(main, meta).ask(question) == "Done."
        seen = main.requests[1].messages
        reply = next(m for m in seen if m.role == "tool")
        assert reply.name == "weather" and "Found it." in reply.content, call
        given = categories.requests[0].messages[1].content
        assert (
            given == f"Objective: {arguments['objective']}\nExact input: {arguments['exact_input']}"
        )


async def test_a_call_to_a_category_that_does_not_exist_goes_where_any_category_sends_it() -> None:
    question = "What is the forecast for Paris?"
    call = ToolCall(name="weather_forecasts", arguments={"city": "Paris"})
    main, categories = _main_calls(call), _category_run()
    agent = MainAgent(main, world(categories, guards=SMALL_EVERY_TURN))
    assert agent.category_for(call, question) == "weather"
    assert await agent.ask(question) == "Done."
    assert category_named(categories.requests[0]) == "Weather"
    reply = next(m for m in main.requests[1].messages if m.role == "tool")
    assert '"category":"Weather"' in reply.content and "Found it." in reply.content


@pytest.mark.parametrize("guards", ["capable", SMALL_EVERY_TURN])
async def test_any_category_reaching_a_category_called_for_the_same_task_runs_once(
    guards: Guards | str,
) -> None:
    # Seen with the 1.5B: `entertainment` and `any_category` in one reply for the same
    # message; `any_category` reached `entertainment`, which ran the same tool twice.
    task = {"objective": "The forecast for Paris", "exact_input": "Paris"}
    calls = [ToolCall(name="weather", arguments=task), ToolCall(name=ANY_CATEGORY, arguments=task)]
    main = ScriptedModel([AssistantTurn(tool_calls=calls), AssistantTurn(text="Done.")])
    categories = _category_run()
    agent = MainAgent(main, world(categories, guards=guards))
    assert await agent.ask("What is the forecast for Paris?") == "Done."
    assert [category_named(r) for r in categories.requests] == ["Weather", "Weather"]
    assert not has_results(categories.requests[0]) and has_results(categories.requests[1])
    replies = [m for m in main.requests[1].messages if m.role == "tool"]
    assert [m.tool_call_id for m in replies] == [c.id for c in calls]
    assert replies[0].content == replies[1].content and "Found it." in replies[0].content


async def test_a_call_no_category_fits_is_answered_with_an_error_and_runs_nothing() -> None:
    call = ToolCall(name="teleport", arguments={"to": "Mars"})
    main, categories = _main_calls(call), _category_run()
    agent = MainAgent(main, world(categories, guards=SMALL_EVERY_TURN))
    assert agent.category_for(call, "Beam me up") is None
    assert await agent.ask("Beam me up") == "Done."
    reply = next(m for m in main.requests[1].messages if m.role == "tool")
    assert reply.content.startswith("error: no category fits this task")
    assert categories.requests == []


TRACK_AS_TEXT = '```json\n{"name": "track_parcel", "arguments": {"tracking_number": "CA107"}}\n```'
ASK_AS_TEXT = (
    '{"name": "parcel_tracking", "arguments": {"objective": "Track it", "exact_input": "CA107"}}'
)


# The 1.5B over 2,009 tools wrote category calls as elements named after the tool.
ANY_AS_ELEMENT = '<any_category objective="Track the parcel" exact_input="CA107">\n</any_category>'


@pytest.mark.parametrize(
    ("written", "objective"),
    [
        (TRACK_AS_TEXT, "Where is CA107?"),
        (ASK_AS_TEXT, "Track it"),
        (ANY_AS_ELEMENT, "Track the parcel"),
    ],
    ids=["a-tool-of-a-category", "a-category-that-does-not-exist", "an-element"],
)
async def test_a_call_written_as_text_to_a_name_the_router_can_route_runs(
    written: str, objective: str
) -> None:
    scripted = ScriptedModel([AssistantTurn(text=written), AssistantTurn(text="Out for delivery.")])
    main = RecoveringModel(scripted)
    categories = _category_run()
    agent = MainAgent(main, world(categories, max_categories=2, guards=SMALL_EVERY_TURN))
    assert await agent.ask("Where is CA107?") == "Out for delivery."
    assert [category_named(r) for r in categories.requests] == ["Parcels", "Parcels"]
    task = read_task(categories.requests[0].messages[1].content)
    assert task is not None and task[0] == objective
    seen = scripted.requests[1].messages
    assert not any(m.role == "user" and "could not be read" in m.content for m in seen)


async def test_a_routable_call_quoted_from_the_user_is_plain_text() -> None:
    scripted = ScriptedModel([AssistantTurn(text=TRACK_AS_TEXT)])
    categories = _category_run()
    agent = MainAgent(RecoveringModel(scripted), world(categories))
    assert await agent.ask(f"Is this right? {TRACK_AS_TEXT}") == TRACK_AS_TEXT.strip()
    assert categories.requests == [] and len(scripted.requests) == 1


async def test_a_call_written_as_text_to_a_service_goes_where_any_category_sends_it() -> None:
    """Seen with the 1.5B: offered one category described as "It can: QR Code Generator:
    get qrcode", it called "QR Code Generator" with the tool's arguments."""
    written = (
        '<tools>\n{"name": "Parcel Service", "arguments": {"tracking_number": "CA107"}}\n</tools>'
    )
    scripted = ScriptedModel([AssistantTurn(text=written), AssistantTurn(text="Out for delivery.")])
    categories = _category_run()
    agent = MainAgent(
        RecoveringModel(scripted), world(categories, max_categories=2, guards=SMALL_EVERY_TURN)
    )
    assert await agent.ask("Where is my parcel CA107?") == "Out for delivery."
    assert category_named(categories.requests[0]) == "Parcels"
    task = read_task(categories.requests[0].messages[1].content)
    assert task == (
        "Where is my parcel CA107?",
        'Parcel Service {"tracking_number": "CA107"}',
    )


async def test_a_call_written_as_text_that_no_category_fits_is_answered_so() -> None:
    nothing = '{"name": "teleport_now", "arguments": {"to": "Mars"}}'
    scripted = ScriptedModel([AssistantTurn(text=nothing), AssistantTurn(text="I cannot.")])
    categories = _category_run()
    agent = MainAgent(RecoveringModel(scripted), world(categories, guards=SMALL_EVERY_TURN))
    assert await agent.ask("Beam me to Mars") == "I cannot."
    assert categories.requests == []
    reply = next(m for m in scripted.requests[1].messages if m.role == "tool")
    assert reply.content.startswith("error: no category fits this task")
    # A name alone is data, not a call: the reply is the answer.
    data = ScriptedModel([AssistantTurn(text='{"name": "Mars"}')])
    meta = world(_category_run(), guards=SMALL_EVERY_TURN)
    assert await MainAgent(RecoveringModel(data), meta).ask("A planet?") == ('{"name": "Mars"}')


# -- the config section ------------------------------------------------------------------
def test_the_routing_section_is_read_and_checked(tmp_path: Path) -> None:
    category = {"description": "Arithmetic.", "tools": ["add"]}
    data = {"routing": {"max_categories": 3, "retry_categories": 0}, "Maths": category}
    config = MetaToolsConfig.from_data(data)
    assert config.routing == RoutingConfig(max_categories=3, retry_categories=0)
    meta = MetaManager.from_config(config, tools=[add], model=ScriptedModel([]))
    assert meta.routing.max_categories == 3
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps({"routing": {"max_categorie": 3}, "Maths": category}))
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.load(path)
    assert "routing" in str(caught.value) and "max_categories" in str(caught.value)


# -- a search that found nothing ----------------------------------------------------------
@tool
def find_in_text(text: str, query: str) -> dict[str, Any]:
    """Find every occurrence of a word or phrase in a text."""
    found = [i for i in range(len(text)) if text.startswith(query, i)]
    return {"query": query, "total": len(found), "matches": found}


@tool
def read_lines(path: str, first: int = 1) -> str:
    """Read the lines of a file, from line `first`."""
    return "alpha" if (path, first) == ("notes.txt", 1) else ""


def text_then_files(after_nothing: str) -> ScriptedModel:
    """Text searches the file's name and, having found nothing, replies `after_nothing`
    (or calls decline); Files reads the file."""

    def reply(request: ChatRequest) -> AssistantTurn:
        if category_named(request) == "Files":
            if has_results(request):
                return AssistantTurn(text="Line 1 is alpha.")
            call = ToolCall(name="read_lines", arguments={"path": "notes.txt", "first": 1})
            return AssistantTurn(tool_calls=[call])
        if not has_results(request):
            search = {"text": "notes.txt", "query": "line 1"}
            return AssistantTurn(tool_calls=[ToolCall(name="find_in_text", arguments=search)])
        if after_nothing == "a decline call":
            call = ToolCall(name="decline", arguments={"reason": "no tool here reads files"})
            return AssistantTurn(tool_calls=[call])
        return AssistantTurn(text=after_nothing)

    return ScriptedModel.from_function(reply)


LINE_ONE = {"objective": "Find line 1 of notes.txt", "exact_input": "notes.txt"}


# "decline" alone: seen with the 1.5B on demo f3, after `list_files` found nothing.
@pytest.mark.parametrize("declines", ["a decline call", "decline", "call decline"])
async def test_a_decline_after_a_search_that_found_nothing_runs_the_next_category(
    declines: str,
) -> None:
    """Seen with the 1.5B on demo x4: the text category searched the text "notes.txt" for
    "line 1", found nothing, and its answer "line 1" went back as a success."""
    model = text_then_files(declines)
    text = CategoryManager(
        "Text", "Words in a text.", [find_in_text], model, guards=SMALL_EVERY_TURN
    )
    files = CategoryManager(
        "Files", "Read the lines of files.", [read_lines], model, guards=SMALL_EVERY_TURN
    )
    meta = MetaManager([text, files], guards=SMALL_EVERY_TURN)
    # Text ranks first, and its search found nothing: a retry even below the first choice.
    assert meta.rank("Find line 1 of notes.txt\nnotes.txt")[0].category.name == "Text"
    result = await meta.call_tool("text", LINE_ONE)
    assert (result.status, result.category, result.declined) == ("success", "Files", ["Text"])
    assert result.remainder is None
    evaluation = model.requests[1].messages[-1].content
    assert "find_in_text found nothing" in evaluation
    assert "The results answer the task" not in evaluation


async def test_without_its_guard_finding_nothing_is_no_reason_to_run_the_task_again() -> None:
    """Guard `found_nothing` off (capable): a search that worked did something, so its
    category's decline ends the call there even with a retry configured."""
    model = text_then_files("a decline call")
    text = CategoryManager("Text", "Words in a text.", [find_in_text], model, guards="capable")
    files = CategoryManager("Files", "Read the lines of files.", [read_lines], model)
    routing = RoutingConfig(retry_categories=1)
    result = await MetaManager([text, files], routing=routing).call_tool("text", LINE_ONE)
    assert (result.category, result.declined) == ("Text", None)
    assert [e.tool for e in result.executions] == ["find_in_text"]


async def test_finding_nothing_may_be_the_answer() -> None:
    model = text_then_files("'line 1' does not occur in it.")
    text = CategoryManager("Text", "Words in a text.", [find_in_text], model)
    result = await MetaManager([text]).call_tool("text", LINE_ONE)
    assert (result.status, result.summary) == ("success", "'line 1' does not occur in it.")


LINE_ONE_SEARCH = {"text": "notes.txt", "query": "line 1"}


@pytest.mark.parametrize(
    ("result", "arguments", "nothing"),
    [
        ('{"query": "line 1", "total_matches": 0, "matches": [], "truncated": false}',
         LINE_ONE_SEARCH, True),
        ("[]", {}, True),
        ('{"files": {"data": []}}', {}, True),
        ('{"folder": "data", "entries": []}', {"path": "./data/"}, True),  # an echo
        ('{"query": "x", "total": 2, "matches": []}', {"query": "x"}, False),  # a count
        ('{"matches": [{"line": 1}]}', {}, False),
        ('{"words": 0}', {}, False),  # no list: a measure, not a search
        ("{}", {}, False),  # an action's "done"
        ("", {}, False),
        ("no match", {}, False),  # text is the model's to read
        # Seen on demo d3: a text the call was not given is a finding.
        ('{"start": "2025-01-15", "result": "2025-04-15", "weekday": "Tuesday", "notes": []}',
         {"date": "2025-01-15", "days": 90}, False),
        ('{"status": "OK", "items": [], "next": null}', {"q": "x"}, True),  # a status
        ('{"message": "No matches found.", "items": []}', {"q": "x"}, True),
        ('{"id": "42", "items": []}', {"id": 42}, True),  # a number argument, as text
        ('{"result": "HELLO", "notes": []}', {"text": "hello"}, False),  # not an echo
        ('{"query": "line 1", "matches": []}', {}, False),  # whose query? not this call's
        ('{"query": "line 1", "matches": []}', '{"query": "line 1"', False),  # unread arguments
    ],
)  # fmt: skip
def test_what_counts_as_found_nothing(result: str, arguments: Any, nothing: bool) -> None:
    assert found_nothing(result, arguments) is nothing


async def test_a_result_with_a_new_value_beside_an_empty_list_is_an_answer() -> None:
    """Seen with the 1.5B on demo d3 ("What date is 90 days after 2025-01-15?"):
    `shift_date` gave the date with `"notes": []`, the loop told the model that it found
    nothing, the model declined, and the text category was tried instead."""

    @tool
    def shift_date(date: str, days: int = 0) -> dict[str, Any]:
        """Add days to a date."""
        return {"start": date, "result": "2025-04-15", "notes": []}

    call = ToolCall(name="shift_date", arguments={"date": "2025-01-15", "days": 90})
    model = ScriptedModel([AssistantTurn(tool_calls=[call]), AssistantTurn(text="2025-04-15")])
    dates = CategoryManager("Dates", "Shift dates.", [shift_date], model)
    result = await dates.run("The date 90 days after 2025-01-15", "2025-01-15")
    assert (result.status, result.summary) == ("success", "2025-04-15")
    evaluation = model.requests[1].messages[-1].content or ""
    assert "found nothing" not in evaluation and "The results answer the task" in evaluation


def declines_in_text(request: ChatRequest) -> AssistantTurn:
    """Text declines at once; Files reads the file."""
    if category_named(request) == "Files":
        if has_results(request):
            return AssistantTurn(text="Line 1 is alpha.")
        call = ToolCall(name="read_lines", arguments={"path": "notes.txt", "first": 1})
        return AssistantTurn(tool_calls=[call])
    call = ToolCall(name="decline", arguments={"reason": "no tool here reads files"})
    return AssistantTurn(tool_calls=[call])


@pytest.mark.parametrize("retry_categories", [None, 1])
async def test_a_decline_where_the_ranking_agrees_stands_unless_retries_are_configured(
    retry_categories: int | None,
) -> None:
    """Under guard `retry_declined`, a decline with no call that worked, in the category
    the ranking puts first, is no wrong first choice to mend (seen on the tuning split:
    "a news aggregator for Cameroon", declined by the news category, ran a finance
    search); `routing.retry_categories` asks for the next category anyway."""
    model = ScriptedModel.from_function(declines_in_text)
    text = CategoryManager("Text", "Words in a text.", [find_in_text], model, guards="small")
    files = CategoryManager("Files", "Read files.", [read_lines], model, guards="small")
    routing = RoutingConfig(retry_categories=retry_categories)
    meta = MetaManager([text, files], guards="small", routing=routing)
    question = {"objective": "Find line 1 in a text", "exact_input": "notes.txt"}
    assert meta.rank("Find line 1 in a text\nnotes.txt")[0].category.name == "Text"
    result = await meta.call_tool("text", question)
    if retry_categories is None:
        assert (result.status, result.category, result.declined) == (
            "no_suitable_tool",
            "Text",
            None,
        )
    else:
        assert (result.category, result.declined) == ("Files", ["Text"])


async def test_a_decline_in_a_category_ranked_below_another_runs_the_better_one() -> None:
    model = ScriptedModel.from_function(declines_in_text)
    text = CategoryManager("Text", "Words in a text.", [find_in_text], model, guards="small")
    files = CategoryManager(
        "Files", "Read the lines of files.", [read_lines], model, guards="small"
    )
    meta = MetaManager([text, files], guards="small")
    question = {"objective": "Read line 1 of the file", "exact_input": "notes.txt"}
    assert meta.rank("Read line 1 of the file\nnotes.txt")[0].category.name == "Files"
    result = await meta.call_tool("text", question)
    assert (result.category, result.declined) == ("Files", ["Text"])
