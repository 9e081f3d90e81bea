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
from meta_tools.cli.offline_demo import DEMO, demo_config
from meta_tools.config import MetaToolsConfig
from meta_tools.turn_trace import TURN_EVENTS
from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli_process import meta_tools_command
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


def test_the_demo_runs_to_completion_offline() -> None:
    done = CliRunner().invoke(app, ["demo"], env=keyless_env())
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
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


def test_the_demo_refuses_a_config_without_its_tools_in_one_line_before_asking(
    tmp_path: Path,
) -> None:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps({"python_tools": ["cli_sample_tools.py"], **CATEGORIES}))
    done = subprocess.run(
        [*meta_tools_command(), "demo", "-c", "mine.json"],
        capture_output=True,
        text=True,
        env=keyless_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: mine.json cannot run the demo: no category has the demo server's tools"
        " 'calculate', 'convert_time_zone', 'convert_units', 'describe_date',"
        " 'text_statistics'; run `meta-tools demo` without -c, or `meta-tools init` for a"
        " config that groups them\n"
    )


def test_example_without_a_model_says_what_is_missing_and_where_the_offline_demo_is(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "example.py")],
        capture_output=True,
        text=True,
        env=keyless_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: OpenAIChatModel('gpt-4o-mini') has no API key: pass api_key=... or set the"
        " environment variable 'OPENAI_API_KEY' (a base_url on this machine needs none)\n"
        "hint: `meta-tools validate` checks the config; `meta-tools demo` runs offline,"
        " without a model\n"
    )


def test_example_uses_only_public_names() -> None:
    source = (ROOT / "example.py").read_text()
    imports = [line for line in source.splitlines() if line.startswith(("from ", "import "))]
    assert [line for line in imports if "meta_tools" in line] == [
        "from meta_tools import MainAgent, MetaManager, MetaToolsError"
    ]


def test_example_takes_the_model_from_the_configs_model_section(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    model = {"provider": "openai", "name": "from-config", "base_url": llm_server.openai_base_url}
    config = {"model": model, "python_tools": ["cli_sample_tools.py"], **CATEGORIES}
    (tmp_path / "mine.json").write_text(json.dumps(config))
    task = {"objective": "Add 2 and 3", "exact_input": "2 3"}
    llm_server.enqueue(
        Reply(body=openai_tool_reply(wire_tool_call("call_m1", "math", task))),
        Reply(body=openai_tool_reply(wire_tool_call("call_c1", "add", {"a": 2, "b": 3}))),
        Reply(body=openai_text_reply("2 + 3 = 5")),
        Reply(body=openai_text_reply("It is 5.")),
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "example.py"), "mine.json"],
        input="What is 2 + 3?\n",
        capture_output=True,
        text=True,
        env=keyless_env(),
        cwd=tmp_path,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        "Friday's tools: math, text. Type 'exit' to leave.\nyou> Friday> It is 5.\n\nyou> "
    )
    assert {r.body["model"] for r in llm_server.requests} == {"from-config"}


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
    # Friday's side: one turn per question, each with the category calls it made.
    turns: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in everything:
        if line["event"] in TURN_EVENTS:
            turns[line["run_id"]].append(line)
    assert [
        (turn[0]["request"], sum(line["event"] == "category_asked" for line in turn))
        for turn in turns.values()
    ] == [(q.text, len(q.tasks)) for q in DEMO]
    assert all(turn[-1]["event"] == "turn_finished" for turn in turns.values())
    lines = [
        line
        for line in everything
        if line["event"] != "model_called" and line["event"] not in TURN_EVENTS
    ]
    assert len(lines) == 27  # the steps; the LLM calls' lines are tested in tests/cli
    assert {line["turn_id"] for line in lines} == set(turns)
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
    assert lines == [
        "Friday's tools: math_units, dates_time_zones, text_analysis, files. Type 'exit' to leave.",
        "you> Friday> 17 × 3 is 51.",  # stdin is not echoed
        "",
        "you>",
    ]
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
