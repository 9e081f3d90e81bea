"""The end-to-end benchmark (`python -m benchmarks e2e`) with a scripted model and the fake server.

The real-model numbers come from running it by hand; these tests check its
tasks, its scoring and its accounting, so that those numbers mean what they say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks import ranking as ranking_benchmark
from benchmarks.e2e import chosen, main, run_catalog, run_demo, run_routing, score_demo
from benchmarks.e2e_catalog import sample_queries
from benchmarks.e2e_sides import Run
from benchmarks.e2e_tasks import TASKS, interleaved
from benchmarks.report import latest_run
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.llm.recovery import RecoveringModel
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    dashscope_text_reply,
    dashscope_tool_reply,
    openai_text_reply,
    wire_tool_call,
)

ROOT = Path(__file__).resolve().parent.parent
by_id = {t.id: t for t in TASKS}


def test_the_demo_set_has_forty_checkable_tasks_of_every_kind_over_every_demo_tool() -> None:
    config = json.loads((ROOT / "Meta_tool_config.json").read_text())
    slugs = {"math_units", "dates_time_zones", "text_analysis", "files"}
    demo_tools = {t for name, c in config.items() if name != "mcp_servers" for t in c["tools"]}
    assert len(TASKS) >= 40 and len({t.id for t in TASKS}) == len(TASKS)
    groups = {t.group for t in TASKS}
    assert {"two", "ask", "decline"} <= groups
    for task in TASKS:
        assert {r.category for r in task.routes} <= slugs
        if task.kind == "answer":
            assert task.expect and task.tools
    used = {tool for t in TASKS for options in t.tools for tool in options}
    assert used == demo_tools
    assert all(len(t.routes) == 2 for t in TASKS if t.group == "two")
    # `--limit 7` already covers every group.
    assert {t.group for t in interleaved(TASKS, lambda t: t.group)[:7]} == groups


def test_answers_are_checked_by_value_whatever_the_spelling() -> None:
    x1 = by_id["x1"]
    assert x1.answered("It is a **Friday**, and 365 × 24 = 8,760.")
    assert not x1.answered("It is a Friday.")
    assert by_id["m5"].answered("100 °F is 37.78 °C")
    assert by_id["m4"].answered("10 mi = 16.09344 km")
    # A number is found only whole, and a reply that is a tool call answers nothing.
    assert not by_id["t1"].answered("It has 19 words, 0.9 of them short.")
    assert by_id["t1"].answered("It has 9.0 words.") and not by_id["t1"].answered("9.5 words")
    assert not by_id["t1"].answered('```json\n{"name": "text_statistics", "arguments": {"top": 9}}')


def test_no_expected_number_can_be_found_by_echoing_the_question() -> None:
    # An answer that repeats the task ("(125 + 375) / 4 is 218.75") must not pass for 125.
    for task in TASKS:
        for options in task.expect:
            for value in options:
                if any(ch.isdigit() for ch in value):
                    assert not task.answered(task.prompt), (task.id, value)


def test_scoring_asks_for_the_right_tools_a_question_or_no_tool_at_all() -> None:
    right = Run(answer="391", ran=["calculate"])
    assert score_demo(by_id["m1"], right) == (True, True)
    assert score_demo(by_id["m1"], Run(answer="391")) == (True, False)
    asked = Run(answer="Which temperature?", statuses=["insufficient_input"])
    assert score_demo(by_id["q1"], asked) == (True, True)
    assert score_demo(by_id["q1"], Run(answer="It is 98.6 F.", ran=["convert_units"])) == (
        False,
        False,
    )
    assert score_demo(by_id["n1"], Run(answer="I cannot book flights.")) == (True, True)
    assert score_demo(by_id["n1"], Run(answer="done", ran=["shift_date"])) == (False, False)
    # A call written as text and never run is neither a decline nor a question (as 1.5B replied).
    xml_call = '<tools>\n  <function name="text_analysis">\n    <arguments>\n'
    assert score_demo(by_id["n1"], Run(answer=xml_call)) == (False, True)
    json_call = '```json\n{"name": "weather", "arguments": {"objective": "Ask?"}}\n```'
    assert score_demo(by_id["q1"], Run(answer=json_call)) == (False, True)


def oracle(request: ChatRequest) -> AssistantTurn:
    """A model that does each demo task right; it writes concrete calls as text, as small models do."""
    offered = {t.name for t in request.tools}
    last = request.messages[-1]
    done = last.role == "tool" or last.content.startswith("Round ")
    if done or not offered:
        told = [m.content for m in request.messages if m.role == "tool"]
        return AssistantTurn(text="Result: " + " | ".join(told))
    text = "\n".join(m.content for m in request.messages if m.role == "user")
    if "17 * 23" in text or "17 by 23" in text:
        if "math_units" in offered:
            call = {"objective": "Multiply 17 by 23", "exact_input": "17 * 23"}
            return AssistantTurn(tool_calls=[ToolCall(name="math_units", arguments=call)])
        written = '```json\n{"name": "calculate", "arguments": {"expression": "17 * 23"}}\n```'
        return AssistantTurn(text=written)
    if "temperature" in text.lower():
        if "request_input" in offered:
            question = {"missing": ["the temperature"], "question": "Which temperature?"}
            return AssistantTurn(tool_calls=[ToolCall(name="request_input", arguments=question)])
        return AssistantTurn(text="Which temperature should I convert?")
    if "decline" in offered:
        reason = {"reason": "No booking tool.", "suggestion": "Use a travel site."}
        return AssistantTurn(tool_calls=[ToolCall(name="decline", arguments=reason)])
    return AssistantTurn(text="I cannot book flights.")


@pytest.mark.anyio
async def test_the_demo_set_adds_up_calls_and_tokens_of_the_main_agent_and_the_categories() -> None:
    model = RecoveringModel(ScriptedModel.from_function(oracle))
    tasks = [by_id["m1"], by_id["q1"], by_id["n1"]]
    found = await run_demo(model, tasks, ["hierarchy", "category", "flat"])
    sides = found["sides"]
    for side in ("hierarchy", "category", "flat"):
        assert (sides[side]["accuracy"], sides[side]["right_tool"]) == (1.0, 1.0), side
    calls = {(r["task"], r["side"]): r["llm_calls"] for r in found["runs"]}
    # m1, small profile: the main agent's call + the category's, the short result handed up
    # twice (no model call restates it); the category alone 1; flat 2.
    assert [calls[("m1", s)] for s in ("hierarchy", "category", "flat")] == [2, 1, 2]
    # q1: the main agent asks the user itself; the category asks through request_input.
    assert [calls[("q1", s)] for s in ("hierarchy", "category", "flat")] == [1, 1, 1]
    recovered = {(r["task"], r["side"]): r["recovered_calls"] for r in found["runs"]}
    assert (recovered[("m1", "hierarchy")], recovered[("m1", "flat")]) == (1, 1)
    assert sides["flat"]["recovered_calls"] == 1


@pytest.mark.anyio
@pytest.mark.parametrize("conversation", [False, True])
async def test_the_demo_set_as_one_conversation_shows_each_question_the_ones_before(
    conversation: bool,
) -> None:
    model = ScriptedModel.from_function(lambda request: AssistantTurn(text="I cannot."))
    tasks = [by_id["m1"], by_id["q1"]]
    found = await run_demo(model, tasks, ["hierarchy"], conversation=conversation)
    assert found["conversation"] is conversation
    second = [m.content for m in model.requests[1].messages if m.role == "user"]
    earlier = [by_id["m1"].prompt] if conversation else []
    assert second == [*earlier, by_id["q1"].prompt]


def write_catalog(data: Path) -> None:
    """A two-category catalog in the public data layout: one MCP tool, two APIs, one query."""
    tools: dict[str, list[dict[str, Any]]] = {
        "livemcpbench": [
            {
                "id": "maps::geocode",
                "name": "geocode",
                "description": "Find the coordinates of a street address.",
                "input_schema": {
                    "type": "object",
                    "properties": {"address": {"type": "string"}},
                    "required": ["address"],
                },
                "group": "maps",
                "category": "Location",
            }
        ],
        "stabletoolbench": [
            {
                "id": "parcels::track",
                "name": "track",
                "description": "Track a parcel by its tracking number.",
                "input_schema": {
                    "type": "object",
                    "properties": {"tracking_number": {"type": "string"}},
                    "required": ["tracking_number"],
                },
                "group": "parcels",
                "category": "Logistics",
            },
            {
                "id": "parcels::health",
                "name": "health",
                "description": "Health of the parcel API.",
                "input_schema": {"type": "object", "properties": {}},
                "group": "parcels",
                "category": "Logistics",
            },
        ],
    }
    for dataset, entries in tools.items():
        (data / dataset).mkdir(parents=True)
        (data / dataset / "catalog.jsonl").write_text(
            "".join(json.dumps(e) + "\n" for e in entries)
        )
    query = {
        "qid": "G1:1",
        "query": "Where is my parcel CA107308006SI? Track it.",
        "gold": ["parcels::track"],
        "candidate_ids": ["parcels::track", "parcels::health"],
    }
    (data / "stabletoolbench" / "queries.jsonl").write_text(json.dumps(query) + "\n")


def catalog_oracle(request: ChatRequest) -> AssistantTurn:
    offered = {t.name for t in request.tools}
    last = request.messages[-1]
    if last.role == "tool" or last.content.startswith("Round ") or not offered:
        return AssistantTurn(text="Tracked.")
    if "logistics" in offered:
        call = {"objective": "Track the parcel", "exact_input": "CA107308006SI"}
        return AssistantTurn(tool_calls=[ToolCall(name="logistics", arguments=call)])
    arguments = {"tracking_number": "CA107308006SI"}
    return AssistantTurn(tool_calls=[ToolCall(name="parcels__track", arguments=arguments)])


@pytest.mark.anyio
async def test_the_large_catalog_scores_gold_calls_and_reports_when_flat_does_not_fit(
    tmp_path: Path,
) -> None:
    write_catalog(tmp_path)
    model = ScriptedModel.from_function(catalog_oracle)
    found = await run_catalog(
        model, tmp_path, None, ["hierarchy", "retrieval", "flat"], top_k=2, context_tokens=50
    )
    assert (found["tools"], found["categories"]) == (3, 2)
    sides = found["sides"]
    assert sides["flat"] == {"tasks": 0, "does_not_fit": True}
    assert (sides["hierarchy"]["accuracy"], sides["retrieval"]["accuracy"]) == (1.0, 1.0)
    # The small profile hands the short result up: no model call restates it (hierarchy 2).
    assert (sides["hierarchy"]["llm_calls"], sides["retrieval"]["llm_calls"]) == (2, 2)
    fits = await run_catalog(model, tmp_path, None, ["flat"], context_tokens=16_384)
    assert fits["sides"]["flat"]["accuracy"] == 1.0


@pytest.mark.anyio
async def test_a_catalog_limit_takes_the_query_subsets_in_turn(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    queries = tmp_path / "stabletoolbench" / "queries.jsonl"
    first = json.loads(queries.read_text())
    more = [first | {"qid": "G1:2"}, first | {"qid": "G2:7"}]
    queries.write_text(queries.read_text() + "".join(json.dumps(q) + "\n" for q in more))
    model = ScriptedModel.from_function(catalog_oracle)
    found = await run_catalog(model, tmp_path, 2, ["retrieval"], top_k=2)
    assert found["queries"] == ["G1:1", "G2:7"]


@pytest.mark.anyio
async def test_a_resumed_catalog_run_keeps_the_rows_it_has_and_asks_only_the_rest(
    tmp_path: Path,
) -> None:
    write_catalog(tmp_path)
    model = ScriptedModel.from_function(catalog_oracle)
    first = await run_catalog(model, tmp_path, None, ["retrieval"], top_k=2)
    asked = len(model.requests)
    kept = first["runs"][0] | {"answer": "kept from before"}
    other = kept | {"task": "G9:not-asked-now"}
    found = await run_catalog(
        model, tmp_path, None, ["retrieval", "hierarchy"], top_k=2, done=[kept, other]
    )
    assert [(r["task"], r["side"]) for r in found["runs"]] == [
        ("G1:1", "retrieval"),
        ("G1:1", "hierarchy"),
    ]
    assert found["runs"][0]["answer"] == "kept from before"
    assert len(model.requests) - asked == 2  # the hierarchy's calls only


def test_the_command_runs_against_an_openai_compatible_server_and_stores_the_run(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_catalog(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    # The model writes its call as text; the OpenAI-compatible client reads it back.
    call = '<tool_call>\n{"name": "parcels__track", "arguments": {"tracking_number": "CA1"}}'
    llm_server.enqueue(
        Reply(body=openai_text_reply(call)), Reply(body=openai_text_reply("On its way."))
    )
    out = tmp_path / "e2e.json"
    argv = ["--base-url", llm_server.openai_base_url, "--model", "fake", "--set", "catalog"]
    argv += ["--sides", "retrieval", "--data", str(tmp_path), "--out", str(out), "--limit", "1"]
    argv += ["--quantisation", "Q4_K_M", "--guards", "small"]
    assert main(argv) == 0
    stored = latest_run(out, "fake")
    assert (stored["model"], stored["quantisation"], stored["limit"]) == ("fake", "Q4_K_M", 1)
    assert stored["machine"]["cores"] >= 1
    retrieval = stored["catalog"]["sides"]["retrieval"]
    assert (retrieval["accuracy"], retrieval["llm_calls"], retrieval["recovered_calls"]) == (
        1.0,
        2,
        1,
    )
    assert llm_server.requests[0].body["max_tokens"] == 400


def test_the_command_runs_against_dashscope_with_the_real_sdk(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_catalog(tmp_path)
    monkeypatch.setenv("DASHSCOPE_API_KEY", "sk-unused")
    call = wire_tool_call("c1", "parcels__track", {"tracking_number": "CA1"})
    llm_server.enqueue(
        Reply(body=dashscope_tool_reply(call)), Reply(body=dashscope_text_reply("On its way."))
    )
    out = tmp_path / "e2e.json"
    argv = ["--provider", "dashscope", "--base-url", llm_server.dashscope_base_url]
    argv += ["--model", "qwen-plus", "--set", "catalog", "--sides", "retrieval", "--limit", "1"]
    argv += ["--data", str(tmp_path), "--out", str(out)]
    assert main(argv) == 0
    retrieval = latest_run(out, "qwen-plus")["catalog"]["sides"]["retrieval"]
    assert (retrieval["accuracy"], retrieval["llm_calls"]) == (1.0, 2)
    assert [r.route for r in llm_server.requests] == ["dashscope", "dashscope"]
    assert llm_server.requests[0].body["model"] == "qwen-plus"


def test_tasks_names_the_demo_tasks_to_run_and_an_unknown_id_is_refused(
    tmp_path: Path, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert [t.id for t in chosen(TASKS, "d3, m1")] == ["d3", "m1"]
    assert chosen(TASKS, None) == interleaved(TASKS, lambda t: t.group)
    with pytest.raises(SystemExit, match="no demo task z9"):
        chosen(TASKS, "m1,z9")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    llm_server.enqueue(Reply(body=openai_text_reply("391")))
    out, log = tmp_path / "e2e.json", tmp_path / "turns.jsonl"
    argv = ["--base-url", llm_server.openai_base_url, "--model", "fake", "--set", "demo"]
    argv += ["--tasks", "m1", "--sides", "flat", "--out", str(out), "--log", str(log)]
    assert main(argv) == 0
    demo = latest_run(out, "fake")["demo"]
    assert demo["tasks"] == ["m1"] and demo["sides"]["flat"]["accuracy"] == 1.0
    (turn,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert (turn["text"], turn["prompt_tokens"]) == ("391", 10)


@pytest.mark.anyio
async def test_routing_only_makes_one_model_call_per_query_mode_and_category_order(
    tmp_path: Path,
) -> None:
    write_catalog(tmp_path)
    model = ScriptedModel.from_function(catalog_oracle)
    found = await run_routing(model, tmp_path, 5, order_seeds=[1, 2])
    assert found["queries"] == ["G1:1"]
    assert set(found["sides"]) == {"ranked/order1", "all/order1", "ranked/order2", "all/order2"}
    for side in found["sides"].values():
        assert (side["tasks"], side["accuracy"]) == (1, 1.0)
    assert {r["first"] for r in found["runs"]} == {"logistics"}
    # Two categories: every mode and order sends the same request, asked once at temperature 0.
    assert [r["reused_reply"] for r in found["runs"]] == [False, True, True, True]
    assert [r["llm_calls"] for r in found["runs"]] == [1, 0, 0, 0]


@pytest.mark.anyio
async def test_routing_only_reads_a_call_written_as_text_as_the_agent_does(tmp_path: Path) -> None:
    """The 1.5B called the service a category's description names, as JSON text; the agent
    runs such a call where `any_category` sends it, and the routing figure counts that."""
    write_catalog(tmp_path)
    text = '{"name": "Parcel Tracker", "arguments": {"tracking_number": "CA107308006SI"}}'
    model = RecoveringModel(ScriptedModel.from_function(lambda _: AssistantTurn(text=text)))
    found = await run_routing(model, tmp_path, 5, modes=["ranked"])
    (row,) = found["runs"]
    assert (row["first"], row["correct"]) == ("logistics", True)


@pytest.mark.anyio
async def test_the_catalog_sides_call_the_gold_category_and_judge_the_first_category(
    tmp_path: Path,
) -> None:
    write_catalog(tmp_path)
    model = ScriptedModel.from_function(catalog_oracle)
    found = await run_catalog(
        model, tmp_path, None, ["hierarchy", "hierarchy_all", "category"], per_subset=1
    )
    sides = found["sides"]
    assert sides["hierarchy"]["first_category"] == sides["hierarchy_all"]["first_category"] == 1.0
    assert sides["category"]["accuracy"] == 1.0 and "first_category" not in sides["category"]
    # No main agent; the category's result is handed up without a second turn.
    assert sides["category"]["llm_calls"] == 1


def test_a_seeded_sample_takes_the_same_queries_of_each_subset() -> None:
    queries = [{"qid": f"{s}:{i}", "subset": s} for s in ("G1", "G2") for i in range(6)]
    first = sample_queries(queries, 2, seed=7)
    assert first == sample_queries(queries, 2, seed=7)
    assert sorted(q["subset"] for q in first) == ["G1", "G1", "G2", "G2"]
    assert first == [q for q in queries if q in first]  # in file order
    assert sample_queries(queries, 10, seed=7) == queries


def test_the_ranking_benchmark_finds_the_gold_category_of_each_query(tmp_path: Path) -> None:
    write_catalog(tmp_path)
    found = ranking_benchmark.run(tmp_path)
    large = found["large catalog (e2e), StableToolBench queries"]
    assert (large["tools"], large["categories"], large["queries"]) == (3, 2, 1)
    assert large["recall@1"] == 1.0
    assert "Seal-Tools, its queries" not in found  # no data, no row
