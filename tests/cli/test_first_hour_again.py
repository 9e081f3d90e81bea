"""A new user's first hour, second pass (issue 25): seeing your prompt, local servers,
config typos, `run`'s order of complaints and model connection errors. No key anywhere."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ModelError
from meta_tools.llm import ChatRequest, Message
from meta_tools.llm.openai import OpenAIChatModel
from meta_tools.router.from_config import missing_model, serving_fallback
from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli.test_first_hour import cli, no_key_env, write
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_text_reply

ROOT = Path(__file__).resolve().parents[2]
OWN_LINE = "Always answer in French, and say which tool you used."
# A template longer than the trace view's default cut, the user's own line last.
TEMPLATE = (
    "You run the tools of {{ category }}: {{ description }}\n"
    + "".join(f"- Rule {n}: call the tool that fits.\n" for n in range(1, 16))
    + OWN_LINE
    + "\n"
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    (tmp_path / "my_prompts").mkdir()
    (tmp_path / "my_prompts" / "tool_selection.j2").write_text(TEMPLATE)
    return tmp_path


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- 1. seeing your own prompt -----------------------------------------------------------------


def test_prompt_prints_the_rendered_templates_and_offered_tools_without_a_model(
    folder: Path,
) -> None:
    write(folder, {"prompts_dir": "my_prompts", **CATEGORIES})
    done = cli(folder, "prompt", "math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("Math (math): the first LLM call, as it would be sent\n")
    assert "You run the tools of Math: Arithmetic on integers.\n" in out
    assert f"- Rule 15: call the tool that fits.\n{OWN_LINE}\n" in out
    assert "── user (the task) ──\nObjective: Add\nExact input: 2 3\n" in out
    assert "── offered tools (3) ──\nadd: " in out
    assert "Round 1 of 5 is done. The task: Add" in out  # the evaluation template, rendered
    assert "The round limit (5) is reached" in out  # and the summary template

    as_json = cli(
        folder, "prompt", "Math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools", "--json"
    )
    assert as_json.returncode == 0, as_json.stderr
    shown = json.loads(as_json.stdout)
    assert [m["role"] for m in shown["messages"]] == ["system", "user"]
    assert shown["messages"][0]["content"].endswith(OWN_LINE)
    assert [t["function"]["name"] for t in shown["tools"]] == ["add", "request_input", "decline"]
    assert shown["answer_without_model"] is None


def test_a_failed_runs_trace_carries_what_was_sent_and_the_error_and_shows_the_users_line(
    folder: Path,
) -> None:
    port = closed_port()
    model = {"provider": "openai", "name": "local", "base_url": f"http://127.0.0.1:{port}/v1"}
    write(folder, {"model": model, "prompts_dir": "my_prompts", **CATEGORIES})
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "--trace", "t.jsonl", "-t",
               "cli_sample_tools", "--json")  # fmt: skip
    assert done.returncode == 1
    error = (
        f"model 'local' at 'http://127.0.0.1:{port}/v1/' failed (not retried): connection"
        f" refused; is a server listening on 127.0.0.1:{port}?"
    )
    assert json.loads(done.stdout)["summary"] == (
        f"The category's model failed: {error} No tool was run."
    )
    events = [json.loads(line) for line in (folder / "t.jsonl").read_text().splitlines()]
    called = [e for e in events if e["event"] == "model_called"]
    assert len(called) == 1
    assert [m["role"] for m in called[0]["messages"]] == ["system", "user"]
    assert called[0]["messages"][0]["content"].endswith(OWN_LINE)
    assert called[0]["error"] == error
    assert called[0]["reply"] == {}
    finished = [e for e in events if e["event"] == "run_finished"]
    assert finished[0]["status"] == "failed"
    assert error in finished[0]["error"]

    shown = cli(folder, "trace", "t.jsonl")  # the default view, not --full
    assert shown.returncode == 0, shown.stderr
    assert OWN_LINE in shown.stdout
    assert "no reply: model 'local'" in shown.stdout
    assert f"is a server listening on 127.0.0.1:{port}?" in shown.stdout


# -- 2. a local server without a key ----------------------------------------------------------


def test_a_local_base_url_needs_no_key_wherever_a_key_is_looked_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "DASHSCOPE_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = MetaToolsConfig.from_data(CATEGORIES)
    with pytest.raises(ModelError, match="a base_url on this machine needs none"):
        OpenAIChatModel("local")
    assert missing_model(config, serving=False) is not None
    OpenAIChatModel("local", base_url="http://localhost:8080/v1")  # no key: fine
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")
    OpenAIChatModel("local")
    assert missing_model(config, serving=False) is None
    assert serving_fallback(config) is None  # `serve` uses the local server, not sampling


def test_example_with_a_local_openai_base_url_and_no_key_chats_instead_of_the_demo(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.enqueue(Reply(body=openai_text_reply("Hello.")))
    env = no_key_env(OPENAI_BASE_URL=llm_server.openai_base_url, OPENAI_MODEL="local")
    done = subprocess.run(
        [sys.executable, "example.py"],
        cwd=ROOT,
        env=env,
        input="hi\nexit\n",
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Friday> Hello." in done.stdout
    assert [r.body["model"] for r in llm_server.requests] == ["local"]


# -- 5. one typo, one problem -------------------------------------------------------------------


def test_a_misspelt_section_is_named_first_and_what_follows_from_it_is_held_back(
    folder: Path,
) -> None:
    servers = {"demo": {"command": "python", "args": ["-m", "meta_tools.demo"]}}
    extra = {"Dates": {"description": "Dates and weekdays.", "tools": ["describe_date"]}}
    write(folder, {"mcp_server": servers, "defaults": {"max_iterations": "x"}, **extra})
    done = cli(folder, "validate")
    assert done.returncode == 1
    assert done.stderr.splitlines()[:4] == [
        "error: Meta_tool_config.json: 2 problems",
        "  - $.mcp_server: not a section name; did you mean the section 'mcp_servers'? (any"
        " other top-level key is read as a category; what follows from it is checked once"
        " it is renamed)",
        "  - $.defaults.max_iterations: must be a whole number, not a string (got 'x')",
        "hint: fix them and run `meta-tools validate` again",
    ]


def test_a_category_named_like_a_section_is_still_a_category() -> None:
    models = {"description": "Train and compare models.", "tools": ["fit"]}
    config = MetaToolsConfig.from_data({"Models": models, "model": {"provider": "sampling"}})
    assert list(config.categories) == ["Models"]


# -- 6. `run` reports the config first, then the model -----------------------------------------


def test_run_without_a_model_reports_the_configs_problems_first_then_the_model(
    folder: Path,
) -> None:
    write(folder, {**CATEGORIES, "Math": {"description": "Sums.", "tools": ["add", "addd"]}})
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools")
    assert (done.returncode, done.stdout) == (1, "")
    lines = done.stderr.splitlines()
    assert lines[0] == "error: Meta_tool_config.json: 1 problem, and no model"
    assert lines[1].startswith(
        "  - $.\"Math\".tools[1]: tool 'addd' is listed but no source provides it"
    )
    assert lines[2].startswith("  - cannot run a category: there is no `model` section")
    assert lines[3].startswith("hint: fix the file (`meta-tools validate` checks it again)")


# -- 7. model connection errors ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_refused_local_connection_fails_at_once_with_a_hint() -> None:
    port = closed_port()
    model = OpenAIChatModel("local", base_url=f"http://127.0.0.1:{port}/v1", backoff_s=0.5)
    request = ChatRequest(messages=[Message(role="user", content="hi")])
    started = time.perf_counter()
    with pytest.raises(ModelError) as caught:
        await model.complete(request)
    assert time.perf_counter() - started < 0.7  # three retries would wait at least 0.875 s
    assert str(caught.value) == (
        f"model 'local' at 'http://127.0.0.1:{port}/v1/' failed (not retried): connection"
        f" refused; is a server listening on 127.0.0.1:{port}?"
    )
    await model.aclose()


def test_run_with_provider_sampling_is_not_told_to_write_it_again(folder: Path) -> None:
    write(folder, {"model": {"provider": "sampling"}, **CATEGORIES})
    done = cli(folder, "run", "math", "-o", "Add", "-i", "2 3", "-t", "cli_sample_tools")
    assert done.returncode == 1
    assert '"provider": "sampling"' not in done.stderr
    assert "  - a local OpenAI-compatible server" in done.stderr
    assert done.stderr.rstrip().endswith(
        "hint: `meta-tools serve` runs it; to run here, make the `model` section one of these"
    )
