"""`meta-tools group` (run as the installed command) and the grouping check of validate/list."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.grouping import adjusted_rand_index, demo_tools
from meta_tools.support.text import slugify
from tests.cli_process import meta_tools_command
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_tool_reply, wire_tool_call

REPO = Path(__file__).parents[2]
DEMO_SERVER = {"command": "python", "args": ["-m", "meta_tools.demo", "--root", "."]}
DEMO_TOOLS = 15


def meta_tools(folder: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return subprocess.run(
        [*meta_tools_command(), *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "COLUMNS": "200", "NO_COLOR": "1", **(env or {})},
        timeout=120,
    )


def categories(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in ("mcp_servers", "model", "defaults")}


def test_group_on_the_demo_config_writes_a_config_that_validate_accepts(tmp_path: Path) -> None:
    shipped = json.loads((REPO / "Meta_tool_config.json").read_text())
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(shipped))
    done = meta_tools(tmp_path, "group", "--write", "proposal.json")
    assert (done.returncode, done.stdout) == (0, "")
    proposal = json.loads((tmp_path / "proposal.json").read_text())
    assert proposal["mcp_servers"] == shipped["mcp_servers"]
    listed = [t for c in categories(proposal).values() for t in c["tools"]]
    assert sorted(listed) == sorted(t for c in categories(shipped).values() for t in c["tools"])
    sizes = sorted(len(c["tools"]) for c in categories(proposal).values())
    assert len(sizes) == 4 and max(sizes) <= 6  # √15 categories, at most 1.5 × the mean
    assert done.stderr.endswith(
        f"4 categories over {DEMO_TOOLS} tools (largest {sizes[-1]}, smallest {sizes[0]}),"
        " named from the tools' own words; written to proposal.json. Edit names and"
        " descriptions, then `meta-tools validate`.\n"
    )
    checked = meta_tools(tmp_path, "validate", "proposal.json", env={"OPENAI_API_KEY": "sk-x"})
    assert (checked.returncode, checked.stdout) == (
        0,
        f"✓ proposal.json: 4 categories, {DEMO_TOOLS} tools, all found\n",
    )


def test_group_a_config_with_only_an_mcp_server_by_server_and_by_topic(tmp_path: Path) -> None:
    servers = {"demo": {**DEMO_SERVER, "prefix": "demo"}}
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps({"mcp_servers": servers}))
    done = meta_tools(tmp_path, "group", "--by", "server")
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    assert list(proposal) == ["mcp_servers", "demo"]
    assert len(proposal["demo"]["tools"]) == DEMO_TOOLS
    assert all(t.startswith("demo_") for t in proposal["demo"]["tools"])

    topic = meta_tools(tmp_path, "group", "-k", "3", "--max-size", "6", "-w", "topic.json")
    assert topic.returncode == 0, topic.stderr
    written = categories(json.loads((tmp_path / "topic.json").read_text()))
    assert sorted(len(c["tools"]) for c in written.values())[-1] <= 6
    assert sum(len(c["tools"]) for c in written.values()) == DEMO_TOOLS
    assert all(c["description"] and c["tool_usage_notes"] for c in written.values())
    checked = meta_tools(tmp_path, "validate", "topic.json", env={"OPENAI_API_KEY": "sk-x"})
    assert checked.returncode == 0, checked.stderr


def test_group_is_deterministic_and_never_overwrites_without_force(tmp_path: Path) -> None:
    (tmp_path / "Meta_tool_config.json").write_text(
        json.dumps({"mcp_servers": {"demo": DEMO_SERVER}})
    )
    first = meta_tools(tmp_path, "group")
    second = meta_tools(tmp_path, "group")
    assert first.returncode == 0 and first.stdout == second.stdout
    (tmp_path / "mine.json").write_text("keep me")
    refused = meta_tools(tmp_path, "group", "--write", "mine.json")
    assert (refused.returncode, refused.stderr) == (
        1,
        "error: mine.json exists\nhint: pass --force to overwrite it, or choose another file\n",
    )
    assert (tmp_path / "mine.json").read_text() == "keep me"
    forced = meta_tools(tmp_path, "group", "--write", "mine.json", "--force")
    assert forced.returncode == 0
    assert (tmp_path / "mine.json").read_text() == first.stdout


def test_group_names_the_categories_with_the_configured_model(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    model = {
        "name": "fake-model",
        "base_url": llm_server.openai_base_url,
        "api_key_env": "FAKE_LLM_KEY",
    }
    config = {"model": model, "mcp_servers": {"demo": DEMO_SERVER}}
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    named = [
        {"id": 0, "name": "Numbers and dates", "description": "Sums, units and calendars."},
        {"id": 1, "name": "Text and files", "description": "Read and compare texts and files."},
    ]
    call = wire_tool_call("call_1", "name_categories", {"categories": named})
    llm_server.enqueue(Reply(body=openai_tool_reply(call)))
    done = meta_tools(
        tmp_path, "group", "-k", "2", "--max-size", "8", env={"FAKE_LLM_KEY": "sk-test"}
    )
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    assert list(categories(proposal)) == ["Numbers and dates", "Text and files"]
    assert proposal["Numbers and dates"]["description"] == "Sums, units and calendars."
    assert proposal["model"] == model  # written back as it was, key variable and all
    (request,) = llm_server.requests
    assert request.body["tools"][0]["function"]["name"] == "name_categories"
    assert "named by the model" in done.stderr
    # --no-model: the tools' own words, no call.
    words = meta_tools(tmp_path, "group", "-k", "2", "--no-model", env={"FAKE_LLM_KEY": "sk-test"})
    assert words.returncode == 0 and len(llm_server.requests) == 1


def test_group_reports_a_server_that_does_not_start(tmp_path: Path) -> None:
    config = {"mcp_servers": {"gone": {"command": "no-such-command-here"}}}
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    done = meta_tools(tmp_path, "group")
    assert done.returncode == 1
    assert "MCP server 'gone' could not be started" in done.stderr
    assert "its tools cannot be grouped" in done.stderr


def test_group_on_5000_hostile_tools_finishes_and_validate_accepts_what_it_wrote(
    tmp_path: Path,
) -> None:
    """Issue 47, item 8: 64-character names, many slugging alike, shared, empty, invisible,
    emoji, CJK, right-to-left and 1 KB descriptions, all from one MCP server."""
    server = {"command": sys.executable, "args": [str(REPO / "tests/grouping/hostile_server.py")]}
    (tmp_path / "cfg.json").write_text(json.dumps({"mcp_servers": {"hostile": server}}))
    done = meta_tools(tmp_path, "group", "-c", "cfg.json", "--no-model", "-w", "proposal.json")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    proposal = json.loads((tmp_path / "proposal.json").read_text())
    drafts = categories(proposal)
    listed = [t for c in drafts.values() for t in c["tools"]]
    assert len(listed) == len(set(listed)) == 5_000
    assert len({slugify(name) for name in drafts}) == len(drafts) == 71
    assert all(len(slugify(name)) <= 64 for name in drafts)
    checked = meta_tools(tmp_path, "validate", "proposal.json", env={"OPENAI_API_KEY": "sk-x"})
    assert (checked.returncode, checked.stdout) == (
        0,
        "✓ proposal.json: 71 categories, 5000 tools, all found\n",
    )


def test_group_reads_the_config_as_strictly_as_validate(tmp_path: Path) -> None:
    """A duplicate key (which json.loads would silently drop) is the same config error."""
    (tmp_path / "Meta_tool_config.json").write_text(
        '{"builtins": {"read_file": {}}, "builtins": {"list_directory": {}}}'
    )
    done = meta_tools(tmp_path, "group")
    checked = meta_tools(tmp_path, "validate")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[:2] == [
        "error: Meta_tool_config.json: 1 problem",
        "  - $.builtins: duplicate key (only one may be given)",
    ]
    assert done.stderr.splitlines()[1] in checked.stderr.splitlines()


def test_group_says_where_tools_come_from_when_there_are_none(tmp_path: Path) -> None:
    (tmp_path / "Meta_tool_config.json").write_text("{}")
    done = meta_tools(tmp_path, "group")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.splitlines()[:2] == [
        "error: Meta_tool_config.json: 1 problem",
        '  - no source provides any tool to group: add MCP servers under "mcp_servers", enable'
        ' "builtins" or pass --tools',
    ]


def test_group_takes_python_tools_from_the_command_line(tmp_path: Path) -> None:
    tools = (REPO / "tests" / "faults" / "serve_tools.py").read_text()
    (tmp_path / "group_sample_tools.py").write_text(tools)
    (tmp_path / "Meta_tool_config.json").write_text("{}")
    done = meta_tools(tmp_path, "group", "--by", "server", "--tools", "group_sample_tools")
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    assert list(proposal) == ["Python tools"]
    assert proposal["Python tools"]["tools"] == ["add", "shout"]


@pytest.fixture
def badly_grouped(tmp_path: Path) -> Path:
    """The demo's tools with a date tool among the file tools, and a one-tool category."""
    shipped = json.loads((REPO / "Meta_tool_config.json").read_text())
    shipped["Dates & Time Zones"]["tools"].remove("shift_date")
    shipped["Files"]["tools"].append("shift_date")
    shipped["Calendars"] = {
        "description": "A month's calendar to look at.",
        "tools": ["month_calendar"],
    }
    shipped["Dates & Time Zones"]["tools"].remove("month_calendar")
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(shipped))
    return tmp_path


def test_validate_and_list_check_report_the_grouping(badly_grouped: Path) -> None:
    done = meta_tools(badly_grouped, "validate", env={"OPENAI_API_KEY": "sk-x"})
    assert done.returncode == 0
    warnings = [line for line in done.stderr.splitlines() if "grouping:" in line]
    assert warnings == [
        "warning: grouping: 1 tool of 'Files' read more like 'Dates & Time Zones':"
        " 'shift_date'; move it or say in the descriptions what sets the categories apart",
        "warning: grouping: 'Calendars' has a single tool: the main agent pays a category tool"
        " for it; merge it into a related category",
    ]
    listed = meta_tools(badly_grouped, "list", "--check", "--json")
    found = json.loads(listed.stdout)["grouping"]
    assert [(f["kind"], f["category"]) for f in found] == [
        ("misplaced", "Files"),
        ("too_small", "Calendars"),
    ]
    shown = meta_tools(badly_grouped, "list", "--check")
    assert shown.stdout.endswith(
        "Grouping check: 2 findings\n"
        f"misplaced: {found[0]['message']}\n"
        f"too_small: {found[1]['message']}\n"
    )


def test_the_shipped_config_passes_the_grouping_check(tmp_path: Path) -> None:
    done = meta_tools(REPO, "list", "--check")
    assert done.returncode == 0
    assert done.stdout.endswith("✓ grouping check: nothing to report\n")


def test_group_k4_on_the_demo_agrees_with_the_shipped_grouping_and_reads_as_sentences(
    tmp_path: Path,
) -> None:
    # Issue 50 item 9: one server of 15 tools, grouped tool by tool, without a model.
    shipped = json.loads((REPO / "Meta_tool_config.json").read_text())
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(shipped))
    done = meta_tools(tmp_path, "group", "-k", "4", "--no-model")
    assert done.returncode == 0, done.stderr
    proposal = categories(json.loads(done.stdout))
    home = {t: name for name, c in categories(shipped).items() for t in c["tools"]}
    got = {t: name for name, c in proposal.items() for t in c["tools"]}
    tools = sorted(home)
    assert adjusted_rand_index([home[t] for t in tools], [got[t] for t in tools]) >= 0.6
    described = {t.name: t.description for t in demo_tools()[0]}
    for name, category in proposal.items():
        # named by what the tools act on, never by an action any tool performs
        assert not {"Convert", "Describe", "Search", "List", "Read", "Count"} & set(name.split())
        # a small category says what each of its tools does, in the tool's own first words
        assert "tools such as" not in category["description"]
        for tool in category["tools"]:
            verb, after = described[tool].split()[:2]
            said = f"{verb.lower()} {after.strip(':,.')}"
            assert said in category["description"], (tool, category["description"])
