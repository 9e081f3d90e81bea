"""`python example.py` without a key, and `meta-tools demo --trace`: the demo, end to end."""

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from meta_tools.cli.app import app
from meta_tools.cli.offline_demo import demo_config
from meta_tools.config import MetaToolsConfig
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_text_reply,
    openai_tool_reply,
    wire_tool_call,
)

ROOT = Path(__file__).resolve().parents[1]

DIALOGUE = [
    "you> A marathon is 42.195 km. How many miles is that, and what pace per km do I need"
    " to finish in 3 h 30 min?",
    "Friday> That is 42.195 km = 26.22 mi; pace = 4.98 min/km (210 / 42.195).",
    "you> My flight lands on 2025-03-30 at 14:30 Paris time. What time is that in Tokyo,"
    " and what weekday is Christmas 2025?",
    "Friday> 14:30 in Paris is 2025-03-30 21:30:00+09:00 (JST) in Tokyo; 2025-12-25 is a Thursday.",
    "you> Count the words in 'The quick brown fox jumps over the lazy dog. The dog sleeps.'"
    " and convert 100 °F to Celsius.",
    "Friday> 12 words in 2 sentences; most frequent: 'dog'. 100 °F = 37.78 °C.",
    "you> Convert 100 to kilograms.",
    "Friday> I need one more detail: 100 what: pounds, grams, ounces?",
]


def keyless_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY")}
    return {**env, "COLUMNS": "250", "NO_COLOR": "1"}


def test_example_without_a_key_says_so_and_runs_the_demo_to_completion(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "example.py")],
        capture_output=True,
        text=True,
        env=keyless_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "No OPENAI_API_KEY or DASHSCOPE_API_KEY is set (nor an OPENAI_BASE_URL on this machine,"
        " which needs no key), so here is the offline demo instead: a scripted conversation"
        " through the real router."
    )
    assert [line for line in lines if line.startswith(("you>", "Friday>"))] == DIALOGUE
    assert "    [Math & Units] ✗ calculate" in done.stdout  # a real tool error, fixed in round 2
    assert lines[-6:] == [
        "Demo finished: 4 questions, 5 category calls, 7 tool calls through the real router"
        " and MCP server.",
        "",
        "Friday saw 4 category tools: 1,787 characters, 442 tokens.",
        "All 15 tools flat would be: 8,713 characters, 2,435 tokens.",
        "Tokens counted with o200k_base (bpe-openai 0.1.4).",
        "That is 79% smaller.",
    ]


EXPECTED_RUNS = [
    (
        "Math & Units",
        [
            ("run_started", None),
            ("tools_selected", None),
            ("tool_finished", "convert_units"),
            ("tool_finished", "calculate"),
            ("evaluated", "more_tools"),
            ("tool_finished", "calculate"),
            ("evaluated", "final"),
            ("run_finished", "success"),
        ],
    ),
    (
        "Dates & Time Zones",
        [
            ("run_started", None),
            ("tools_selected", None),
            ("tool_finished", "convert_time_zone"),
            ("tool_finished", "describe_date"),
            ("evaluated", "final"),
            ("run_finished", "success"),
        ],
    ),
    (
        "Text Analysis",
        [
            ("run_started", None),
            ("tools_selected", None),
            ("tool_finished", "text_statistics"),
            ("evaluated", "final"),
            ("run_finished", "success"),
        ],
    ),
    (
        "Math & Units",
        [
            ("run_started", None),
            ("tools_selected", None),
            ("tool_finished", "convert_units"),
            ("evaluated", "final"),
            ("run_finished", "success"),
        ],
    ),
    (
        "Math & Units",
        [("run_started", None), ("tools_selected", None), ("run_finished", "insufficient_input")],
    ),
]


def step(line: dict[str, Any]) -> tuple[str, str | None]:
    detail = {"tool_finished": "tool", "evaluated": "decision", "run_finished": "status"}
    key = detail.get(line["event"])
    return line["event"], line[key] if key else None


def test_a_demo_trace_has_one_event_per_step_in_order_with_ids_tying_tools_to_their_run(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "demo.jsonl"
    done = CliRunner().invoke(app, ["demo", "--trace", str(trace)], env=keyless_env())
    assert done.exit_code == 0, done.output
    assert "Demo finished: 4 questions, 5 category calls, 7 tool calls" in done.stdout
    everything = [json.loads(text) for text in trace.read_text().splitlines()]
    assert [line["seq"] for line in everything] == list(range(1, len(everything) + 1))
    lines = [line for line in everything if line["event"] != "model_called"]
    assert len(lines) == 27  # the steps; the LLM calls' lines are tested in tests/cli
    runs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        runs[line["run_id"]].append(line)
    # Runs appear in the order they started; each one's lines are in the order of its steps.
    assert [(run[0]["category"], [step(line) for line in run]) for run in runs.values()] == (
        EXPECTED_RUNS
    )
    for run in runs.values():
        assert len({line["main_call_id"] for line in run}) == 1
        for line in run:
            if line["event"] in ("tools_selected", "evaluated"):
                assert line["prompt_tokens"] > 0 and line["duration_s"] >= 0
    main_calls = [run[0]["main_call_id"] for run in runs.values()]
    assert len(set(main_calls)) == 5 and all(c.startswith("call_") for c in main_calls)
    tool_calls = [line["call_id"] for line in lines if line["event"] == "tool_finished"]
    assert len(set(tool_calls)) == 7


def test_the_packaged_demo_config_has_the_categories_of_the_repository_config() -> None:
    packaged = demo_config()
    repository = MetaToolsConfig.load(ROOT / "Meta_tool_config.json")
    assert packaged.categories == repository.categories
    assert list(packaged.mcp_servers) == list(repository.mcp_servers) == ["demo"]


def test_example_with_a_key_chats_through_the_category_tools_until_exit(
    llm_server: FakeLLMServer,
) -> None:
    friday_call = {"objective": "Multiply 17 by 3", "exact_input": "17 * 3"}
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_f1", "math_units", friday_call))),
        Reply(
            body=openai_tool_reply(wire_tool_call("call_c1", "calculate", {"expression": "17 * 3"}))
        ),
        Reply(body=openai_text_reply("17 * 3 = 51")),
        Reply(body=openai_text_reply("17 × 3 is 51.")),
    )
    env = {
        **keyless_env(),
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": llm_server.openai_base_url,
        "OPENAI_MODEL": "fake-model",
        "META_TOOLS_TIMEOUT_S": "240",
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "example.py")],
        input="What is 17 times 3?\nexit\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    lines = [line.rstrip() for line in done.stdout.splitlines()]
    assert lines[:2] == [
        "Friday and the categories use the OpenAI-compatible model 'fake-model' at"
        f" {llm_server.openai_base_url} (timeout 240 s).",
        "Friday's tools: math_units, dates_time_zones, text_analysis, files. Type 'exit' to leave.",
    ]
    assert "Friday> 17 × 3 is 51." in lines
    # stdin is not echoed, so the first step follows the prompt on its line
    assert "you>   Friday → math_units(objective='Multiply 17 by 3', exact_input='17 * 3')" in lines
    assert '    [Math & Units] ✓ calculate(expression="17 * 3") (' in done.stdout
    friday, select, _, answer = (r.body for r in llm_server.requests)
    assert [t["function"]["name"] for t in friday["tools"]] == [
        "math_units",
        "dates_time_zones",
        "text_analysis",
        "files",
    ]
    assert [t["function"]["name"] for t in select["tools"]] == [
        "calculate",
        "convert_units",
        "describe_numbers",
        "request_input",
        "decline",
    ]
    tool_result = json.loads(answer["messages"][-1]["content"])
    assert (tool_result["status"], tool_result["summary"]) == ("success", "17 * 3 = 51")
    assert tool_result["executions"][0]["result"] == {"expression": "17 * 3", "result": 51}
    assert "usage" not in tool_result  # the main agent's LLM is not shown timings or usage
