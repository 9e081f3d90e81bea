"""The BFCL harness (`python -m benchmarks bfcl`) offline: scripted models, BFCL's real entries.

BFCL's data and its AST checker come from the `bfcl-eval` package (the optional
`bfcl` extra, too heavy for CI: its install pulls every model vendor's SDK,
sentence-transformers and faiss). The type mapping and the names need nothing
from it; the tests that read its entries or run its checker skip without it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bfcl_data import (
    HELD_OUT,
    RAN,
    Entry,
    Ledger,
    answer_fits,
    first_answer,
    json_schema,
    pooled_tools,
    sample,
    tool_names,
    tools_for,
)
from meta_tools.exceptions import ToolArgumentsError
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_text_reply

needs_bfcl = pytest.mark.skipif(
    find_spec("bfcl_eval") is None,
    reason="BFCL's data and checker come from the optional bfcl-eval package, not installed"
    " (pip install -e '.[bfcl]')",
)


def entry_of(functions: list[dict[str, Any]], *, id: str = "x_0") -> Entry:
    return Entry(id, "live_simple", ({"role": "user", "content": "q"},), tuple(functions), None)


RIDE = {
    "name": "uber.ride",
    "description": "Finds a ride.",
    "parameters": {
        "type": "dict",
        "required": ["loc", "time"],
        "properties": {
            "loc": {"type": "string", "description": "Where from."},
            "time": {"type": "integer", "description": "Wait, in minutes."},
            "tip": {"type": "float", "description": "Tip.", "default": 0.0},
        },
    },
}


def test_bfcl_type_names_become_json_schema_types_all_the_way_down() -> None:
    bfcl = {
        "type": "dict",
        "description": "An order.",
        "properties": {
            "price": {"type": "float", "description": "Price."},
            "point": {"type": "tuple", "items": {"type": "float"}},
            "extra": {"type": "any", "description": "Anything.", "default": None},
            "flags": {"type": "array", "items": {"type": "bool"}},
            "lines": {
                "type": "array",
                "items": {
                    "type": "dict",
                    "properties": {"size": {"type": "string", "enum": ["S"]}},
                },
            },
            "count": {"type": "integer", "optional": True},
        },
        "required": ["price"],
    }
    assert json_schema(bfcl) == {
        "type": "object",
        "description": "An order.",
        "required": ["price"],
        "properties": {
            "price": {"type": "number", "description": "Price."},
            "point": {"type": "array", "items": {"type": "number"}},
            "extra": {"description": "Anything.", "default": None},
            "flags": {"type": "array", "items": {"type": "boolean"}},
            "lines": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"size": {"type": "string", "enum": ["S"]}},
                },
            },
            "count": {"type": "integer", "optional": True},
        },
    }


def test_a_bfcl_function_is_offered_with_a_valid_name_and_its_real_schema() -> None:
    (tool,) = tools_for([RIDE], Ledger())
    assert (tool.name, tool.bfcl_name) == ("uber_ride", "uber.ride")
    assert tool.openai_schema() == {
        "type": "function",
        "function": {
            "name": "uber_ride",
            "description": "Finds a ride.",
            "parameters": {
                "type": "object",
                "properties": {
                    "loc": {"type": "string", "description": "Where from."},
                    "time": {"type": "integer", "description": "Wait, in minutes."},
                    "tip": {"type": "number", "default": 0.0, "description": "Tip."},
                },
                "required": ["loc", "time"],
            },
        },
    }


@pytest.mark.anyio
async def test_a_call_that_validates_returns_the_fixed_text_and_is_recorded_as_the_model_sent_it() -> (
    None
):
    ledger = Ledger()
    (tool,) = tools_for([RIDE], ledger)
    # The tool accepts "10" for an integer, but BFCL is strict on types: the raw value is kept.
    assert await tool.call('{"loc": "Berkeley", "time": "10"}') == RAN
    assert await tool.call({"loc": "Berkeley", "time": 10}) == RAN
    with pytest.raises(ToolArgumentsError, match="'time' is required"):
        await tool.call({"loc": "Berkeley"})
    await tool.call({"loc": "Berkeley", "time": 10})  # the same call again counts once
    assert ledger.take() == [
        ("uber.ride", {"loc": "Berkeley", "time": "10"}),
        ("uber.ride", {"loc": "Berkeley", "time": 10}),
    ]
    assert ledger.take() == []


def test_names_are_made_valid_and_unique_and_each_maps_back_to_bfcl_s_name() -> None:
    assert tool_names(["math.factorial", "math_factorial", "decline", "a b", "x" * 70]) == [
        "math_factorial",
        "math_factorial_2",
        "decline_2",
        "a_b",
        "x" * 64,
    ]
    other_ride = RIDE | {"description": "Finds a ride (another API of the same name)."}
    pool = [
        entry_of([RIDE]),
        entry_of([RIDE], id="x_1"),
        entry_of([other_ride, RIDE | {"name": "b"}]),
    ]
    tools = pooled_tools(pool, Ledger())
    # The same definition twice is one tool; a second definition of a name gets a suffix.
    assert [(t.name, t.bfcl_name) for t in tools] == [
        ("uber_ride", "uber.ride"),
        ("uber_ride_2", "uber.ride"),
        ("b", "b"),
    ]
    assert tools[1].function is other_ride


def test_bfcl_s_answer_gives_each_parameter_its_first_accepted_value() -> None:
    answer = ({"uber.ride": {"loc": ["Berkeley", "Berkeley, CA"], "time": [10], "tip": ["", 1.5],
                             "car": [{"size": ["", "large"], "seats": [4]}]}},)  # fmt: skip
    car = {"type": "dict", "properties": {"size": {"type": "string"}, "seats": {"type": "integer"}}}
    with_car = RIDE | {
        "parameters": RIDE["parameters"]
        | {"properties": RIDE["parameters"]["properties"] | {"car": car}}
    }
    entry = Entry("live_simple_0", "live_simple", (), (with_car,), answer)
    assert first_answer(entry) == [
        (
            "uber.ride",
            {"loc": "Berkeley", "time": 10, "tip": 1.5, "car": {"size": "large", "seats": 4}},
        )
    ]
    assert answer_fits(entry) is True
    assert (
        answer_fits(
            Entry(
                "live_simple_1",
                "live_simple",
                (),
                (RIDE,),
                ({"uber.ride": {"loc": ["B"], "time": ["soon"]}},),
            )
        )
        is False
    )
    assert answer_fits(entry_of([RIDE])) is None


def test_a_sample_is_drawn_with_its_seed_and_kept_in_file_order() -> None:
    entries = [entry_of([RIDE], id=f"x_{i}") for i in range(20)]
    first, again = sample(entries, 5, 3), sample(entries, 5, 3)
    assert [e.id for e in first.entries] == [e.id for e in again.entries]
    assert [e.id for e in first.entries] == sorted(
        (e.id for e in first.entries), key=lambda i: int(i[2:])
    )
    assert (first.of, first.seed) == (20, 3)
    assert [e.id for e in sample(entries, 5, 4).entries] != [e.id for e in first.entries]
    whole = sample(entries, None, 3)
    assert (len(whole.entries), whole.seed) == (20, None)


def test_a_tuning_sample_never_holds_a_reported_question() -> None:
    entries = [entry_of([RIDE], id=f"x_{i}") for i in range(120)]
    reported = {e.id for e in sample(entries, *HELD_OUT).entries}
    tuning = sample(entries, 40, 1, tune=True)
    assert len(tuning.entries) == 40 and not reported & {e.id for e in tuning.entries}
    assert tuning.of == 120 - HELD_OUT[0]
    every_other = sample(entries, None, 0, tune=True)
    assert {e.id for e in every_other.entries} == {e.id for e in entries} - reported


# --- BFCL's own data and checker -------------------------------------------------------


def bfcl_entries(*ids: str) -> dict[str, Entry]:
    from benchmarks.bfcl_data import load_entries

    wanted = set(ids)
    found: dict[str, Entry] = {}
    for category in {i.rsplit("_", 1)[0] for i in ids}:
        found |= {e.id: e for e in load_entries(category) if e.id in wanted}
    return found


@needs_bfcl
def test_bfcl_s_checker_accepts_right_calls_and_rejects_wrong_ones() -> None:
    from benchmarks.bfcl_check import check

    e = bfcl_entries(
        "simple_python_1", "parallel_0", "multiple_2", "live_simple_0-0-0", "irrelevance_0"
    )
    assert check(e["simple_python_1"], [("math.factorial", {"number": 5})]).valid
    wrong_type = check(e["simple_python_1"], [("math.factorial", {"number": "5"})])
    assert (wrong_type.valid, wrong_type.kind) == (False, "type_error:simple")
    # BFCL's names, not the offered ones: the harness maps them back before checking.
    assert check(e["simple_python_1"], [("math_factorial", {"number": 5})]).kind == (
        "simple_function_checker:wrong_func_name"
    )
    swift = ("spotify.play", {"artist": "Taylor Swift", "duration": 20})
    maroon = ("spotify.play", {"artist": "Maroon 5", "duration": 15})
    assert check(e["parallel_0"], [maroon, swift]).valid  # in any order
    assert check(e["parallel_0"], [swift]).kind == "parallel_function_checker_no_order:wrong_count"
    assert check(e["multiple_2"], [("country_info.capital", {"country": "Brazil"})]).valid
    assert not check(e["multiple_2"], [("country_info.largest_city", {"country": "Brazil"})]).valid
    user = e["live_simple_0-0-0"]
    assert check(user, [("get_user_info", {"user_id": 7890, "special": "black"})]).valid
    assert not check(
        user, [("get_user_info", {"user_id": 7890})]
    ).valid  # 'special' is in the answer
    assert check(user, [("get_user_info", '{"user_id": 7890')]).kind == "ast_decoder:decoder_failed"
    assert check(e["irrelevance_0"], []).valid
    assert not check(
        e["irrelevance_0"], [("determine_body_mass_index", {"weight": 1.0, "height": 1.0})]
    ).valid
    for entry in e.values():
        assert entry.irrelevance or check(entry, first_answer(entry)).valid, entry.id


@needs_bfcl
def test_an_answer_bfcl_takes_with_a_type_its_schema_does_not_declare_is_flagged() -> None:
    from benchmarks.bfcl_check import check

    e = bfcl_entries("simple_python_1", "simple_python_307", "irrelevance_0")
    ((name, arguments),) = first_answer(e["simple_python_307"])
    assert arguments["venue"] is True  # the schema says string; BFCL's checker takes it
    assert check(e["simple_python_307"], [(name, arguments)]).valid
    assert [
        answer_fits(e[i]) for i in ("simple_python_1", "simple_python_307", "irrelevance_0")
    ] == [
        True,
        False,
        None,
    ]


def direct_oracle(entries: Mapping[str, Entry]) -> Callable[[ChatRequest], AssistantTurn]:
    """Right calls on both sides; on an irrelevance entry the plain side calls and the loop declines."""

    def reply(request: ChatRequest) -> AssistantTurn:
        offered = {t.name for t in request.tools}
        last = request.messages[-1]
        if last.role == "tool" or last.content.startswith("Round ") or not offered:
            return AssistantTurn(text="Done.")
        entry = next(
            e for e in entries.values() if any(e.request in m.content for m in request.messages)
        )
        in_loop = "decline" in offered
        names = dict(
            zip(
                (f["name"] for f in entry.functions),
                tool_names([f["name"] for f in entry.functions]),
                strict=True,
            )
        )
        if entry.irrelevance:
            if in_loop:
                return AssistantTurn(
                    tool_calls=[ToolCall(name="decline", arguments={"reason": "none fits"})]
                )
            name = names[entry.functions[0]["name"]]
            return AssistantTurn(
                tool_calls=[ToolCall(name=name, arguments={"weight": 70.0, "height": 1.8})]
            )
        calls = [ToolCall(name=names[n], arguments=a) for n, a in first_answer(entry)]
        return AssistantTurn(tool_calls=calls)

    return reply


def test_the_read_side_reads_the_calls_the_plain_reply_wrote_as_text() -> None:
    """Qwen2.5-Coder under llama.cpp writes its calls as fenced JSON, never as tool calls:
    `plain` scores nothing, `read` parts what reading text does from what the loop does."""
    from benchmarks.bfcl_sides import read_back

    entry = entry_of([RIDE])
    tools = tools_for(entry.functions, Ledger())
    name = tools[0].name
    fenced = f'```json\n{{"name": "{name}", "arguments": {{"loc": "Paris", "time": 5}}}}\n```'
    read = read_back(entry, tools, {"answer": fenced, "error": None, "bfcl_calls": []})
    assert read.calls == [("uber.ride", {"loc": "Paris", "time": 5})]
    assert (read.run.recovered_calls, read.run.llm_calls) == (1, 0)
    native = [["uber.ride", {"loc": "Oslo", "time": 1}]]
    read = read_back(entry, tools, {"answer": "", "error": None, "bfcl_calls": native})
    assert read.calls == [("uber.ride", {"loc": "Oslo", "time": 1})]
    # A reply that failed, or a call to no offered function, reads as no call.
    failed = read_back(entry, tools, {"answer": "", "error": "timed out", "bfcl_calls": []})
    other = '{"name": "lyft_ride", "arguments": {"loc": "Paris"}}'
    unknown = read_back(entry, tools, {"answer": other, "error": None, "bfcl_calls": []})
    assert failed.calls == [] and unknown.calls == []


@needs_bfcl
@pytest.mark.anyio
async def test_the_direct_setting_asks_each_entry_on_both_sides_and_scores_them_with_bfcl_s_checker() -> (
    None
):
    from benchmarks.bfcl import run_direct
    from benchmarks.bfcl_data import Sample

    ids = ("simple_python_1", "parallel_0", "multiple_2", "live_multiple_0-0-0", "irrelevance_0")
    found = bfcl_entries(*ids)
    samples = {
        "simple": Sample([found["simple_python_1"]], 400),
        "parallel": Sample([found["parallel_0"]], 200),
        "multiple": Sample([found["multiple_2"]], 200),
        "live_multiple": Sample([found["live_multiple_0-0-0"]], 1053),
        "irrelevance": Sample([found["irrelevance_0"]], 240),
    }
    model = ScriptedModel.from_function(direct_oracle(found))
    result = await run_direct(model, samples, ["plain", "read", "category"])
    rows = {(r["task"], r["side"]): r for r in result["runs"]}
    for id in ids[:4]:
        assert rows[(id, "plain")]["correct"] and rows[(id, "category")]["correct"], id
        # Native calls are read as they are, and reading asks the model nothing.
        assert rows[(id, "read")]["correct"] and rows[(id, "read")]["llm_calls"] == 0, id
    assert not rows[("irrelevance_0", "read")]["correct"]
    with pytest.raises(ValueError, match="reads the plain side's replies"):
        await run_direct(model, samples, ["read"])
    # One request on the plain side; the loop's select and evaluate turns on the category side.
    assert rows[("simple_python_1", "plain")]["llm_calls"] == 1
    assert rows[("simple_python_1", "category")]["llm_calls"] == 2
    assert rows[("parallel_0", "category")]["bfcl_calls"] == [
        ["spotify.play", {"artist": "Taylor Swift", "duration": 20}],
        ["spotify.play", {"artist": "Maroon 5", "duration": 15}],
    ]
    # Irrelevance: the plain model called (wrong, as BFCL counts it); the loop declined.
    plain, loop = rows[("irrelevance_0", "plain")], rows[("irrelevance_0", "category")]
    assert (plain["correct"], loop["correct"]) == (False, True)
    assert loop["statuses"] == ["no_suitable_tool"] and loop["bfcl_calls"] == []
    assert result["categories"]["irrelevance"]["category"]["accuracy"] == 1.0
    assert result["sides"]["plain"]["accuracy"] == 0.8
    assert result["entries"]["simple"] == {"of": 400, "seed": None, "ids": ["simple_python_1"]}
    # The plain request is the entry's messages as they are, its functions as tools.
    plain_request = next(r for r in model.requests if "decline" not in {t.name for t in r.tools})
    assert [m.model_dump(include={"role", "content"}) for m in plain_request.messages] == [
        {"role": "user", "content": found["simple_python_1"].request}
    ]
    assert [t.name for t in plain_request.tools] == ["math_factorial"]
    # Resumed, the rows it has are kept and only the rest is asked.
    asked = len(model.requests)
    kept = [r for r in result["runs"] if r["side"] == "plain"]
    again = await run_direct(model, {"simple": samples["simple"]}, ["plain", "category"], done=kept)
    assert [(r["task"], r["side"]) for r in again["runs"]] == [
        ("simple_python_1", "plain"),
        ("simple_python_1", "category"),
    ]
    assert again["runs"][0] is kept[0] and len(model.requests) - asked == 2
    # Resumed with the read side, the replies asked before are read first, asking nothing.
    asked = len(model.requests)
    seen: list[tuple[str, int]] = []  # each new row's side, and the requests made by then

    def save(rows: list[dict[str, Any]]) -> None:
        seen.append((rows[-1]["side"], len(model.requests) - asked))

    await run_direct(model, samples, ["plain", "read", "category"], done=kept, on_row=save)
    assert seen[: len(kept)] == [("read", 0)] * len(kept)
    assert [side for side, _ in seen[len(kept) :]] == ["category"] * len(kept)


@needs_bfcl
@pytest.mark.anyio
async def test_the_pooled_setting_asks_through_the_hierarchy_and_retrieval_and_maps_repeated_names_back() -> (
    None
):
    from benchmarks.bfcl import run_pooled
    from benchmarks.bfcl_data import Sample
    from benchmarks.bfcl_sides import PooledCatalog

    pool_ids = ("live_simple_0-0-0", "live_simple_2-2-0", "live_simple_26-6-0", "live_simple_13-3-9",
                "live_multiple_0-0-0", "live_multiple_1-0-1")  # fmt: skip
    found = bfcl_entries(*pool_ids)
    pool = [found[i] for i in pool_ids]
    asked = [found["live_simple_26-6-0"], found["live_simple_0-0-0"]]
    # The same pool gives the same tools and groups: read the names the model will see.
    catalog = PooledCatalog(pool, ScriptedModel([]))
    offered: dict[str, str] = {}
    gold_slug: dict[str, str] = {}
    for entry in asked:
        (name,) = {n for a in entry.answer or () for n in a}
        tool = next(
            t for t in catalog.tools if t.function in entry.functions and t.bfcl_name == name
        )
        offered[entry.id], gold_slug[entry.id] = tool.name, catalog.category_of[tool.name]
    assert offered["live_simple_26-6-0"] == "uber_ride_2"  # a second uber.ride, made unique

    def reply(request: ChatRequest) -> AssistantTurn:
        names = {t.name for t in request.tools}
        last = request.messages[-1]
        if last.role == "tool" or last.content.startswith("Round ") or not names:
            return AssistantTurn(text="Done.")
        entry = next(e for e in asked if any(e.request in m.content for m in request.messages))
        gold = next((t for t in request.tools if t.name == gold_slug[entry.id]), None)
        # The main agent, offered the categories (a category may be named as its one tool).
        if gold is not None and "objective" in gold.parameters.get("properties", {}):
            call = {"objective": entry.request, "exact_input": entry.request}
            return AssistantTurn(tool_calls=[ToolCall(name=gold_slug[entry.id], arguments=call)])
        ((_, arguments),) = first_answer(entry)
        return AssistantTurn(tool_calls=[ToolCall(name=offered[entry.id], arguments=arguments)])

    samples = {"live_simple": Sample(asked, 258, 0)}
    result = await run_pooled(
        ScriptedModel.from_function(reply), pool, samples, ["hierarchy", "retrieval"]
    )
    assert [t.name for t in catalog.tools] == [
        "get_user_info",
        "uber_ride",
        "uber_ride_2",
        "get_current_weather",
        "ChaFod",
        "ChaDri_change_drink",
        "ChaDri_change_drink_2",  # live_multiple_1-0-1 words ChaDri.change_drink differently
    ]
    assert (result["functions"], result["distinct_names"], result["renamed"]) == (7, 5, 4)
    for side in ("hierarchy", "retrieval"):
        assert result["sides"][side]["accuracy"] == 1.0, side
    assert result["sides"]["hierarchy"]["first_category"] == 1.0
    # Counted without a model: what each side could reach at all.
    places = {e.id: catalog.reach(e) for e in asked}
    assert result["reach"] == {
        "questions": 2,
        "gold_category_first": sum(p == 0 for p, _ in places.values()),
        "gold_category_top3": sum(p is not None and p < 3 for p, _ in places.values()),
        "retrieval_holds_gold": sum(held for _, held in places.values()),
    }
    assert places["live_simple_26-6-0"] == (0, True)  # the uber ride: found by both
    # By name, as BFCL's checker scores: either uber.ride, called right, is right.
    rides = {catalog.category_of["uber_ride"], catalog.category_of["uber_ride_2"]}
    assert catalog.gold_categories(found["live_simple_26-6-0"]) == rides
    # Rows kept from an earlier run are judged again as new ones are (nothing is asked).
    stale = [r | {"first_category_right": False} for r in result["runs"]]
    again = await run_pooled(
        ScriptedModel([]), pool, samples, ["hierarchy", "retrieval"], done=stale
    )
    assert again["sides"]["hierarchy"]["first_category"] == 1.0
    ride = next(r for r in result["runs"] if r["task"] == "live_simple_26-6-0")
    assert ride["bfcl_calls"][0][0] == "uber.ride" and ride["calls"][0].startswith("uber_ride_2(")


@needs_bfcl
def test_the_command_sends_the_plain_side_without_recovery_and_stores_rows_as_they_come(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks.bfcl import main
    from benchmarks.bfcl_data import load_entries

    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    # The code that runs is the commit at the start: a sitting of hours sees others land.
    monkeypatch.setattr("benchmarks.bfcl.current_commit", lambda: "aaaaaaa")
    monkeypatch.setattr("benchmarks.report.current_commit", lambda: "bbbbbbb")
    (entry,) = sample(load_entries("simple_python"), 1, 7).entries
    ((name, arguments),) = first_answer(entry)
    (offered,) = tool_names([name])
    text_call = (
        f"<tool_call>\n{json.dumps({'name': offered, 'arguments': arguments})}\n</tool_call>"
    )
    # Plain: the call written as text is not read back; read: it is. Category: it is, runs,
    # then the summary.
    llm_server.enqueue(
        Reply(body=openai_text_reply(text_call)),
        Reply(body=openai_text_reply(text_call)),
        Reply(body=openai_text_reply("Done.")),
    )
    out, log = tmp_path / "bfcl.json", tmp_path / "turns.jsonl"
    argv = ["--base-url", llm_server.openai_base_url, "--model", "fake", "--setting", "direct"]
    argv += ["--categories", "simple", "--limit", "1", "--seed", "7", "--out", str(out)]
    argv += ["--log", str(log), "--quantisation", "Q4_K_M"]
    assert main(argv) == 0
    (stored,) = json.loads(out.read_text())["runs"].values()
    assert stored["commit"] == "aaaaaaa"
    assert (stored["quantisation"], stored["seed"], stored["limit"]) == ("Q4_K_M", 7, 1)
    assert stored["bfcl_eval"] and stored["differences"]
    direct = stored["direct"]
    assert direct["entries"]["simple"]["ids"] == [entry.id]
    plain, read, loop = direct["runs"]
    assert (plain["side"], plain["correct"], plain["recovered_calls"]) == ("plain", False, 0)
    # The same reply, its text read: right, with no request of its own.
    assert (read["side"], read["correct"], read["recovered_calls"]) == ("read", True, 1)
    assert (loop["side"], loop["correct"], loop["recovered_calls"]) == ("category", True, 1)
    assert plain["check_kind"] == "ast_decoder:empty"
    assert llm_server.requests[0].body["tools"][0]["function"]["name"] == offered
    assert len(log.read_text().splitlines()) == 3
