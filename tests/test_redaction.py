"""Secrets from `${VAR}` (and the model's API key) never leave the router.

One test plants secrets where they would leak in practice (a tool that reads
the environment, an error that quotes a key, a model endpoint that echoes it)
and searches every output: the result, the step events, the trace file, every
log record, what the LLM was sent, and the console.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from meta_tools import MetaManager, tool
from meta_tools.category.events import RunEvent
from meta_tools.config import MetaToolsConfig
from meta_tools.exceptions import ConfigError
from meta_tools.support.redaction import Redactor
from meta_tools.tracing import Tracer
from tests.fakes.llm_server import (
    FakeLLMServer,
    Reply,
    openai_error,
    openai_tool_reply,
    wire_tool_call,
)

pytestmark = pytest.mark.anyio

API_KEY = "sk-planted-api-key-4f1b9c"
TOKEN = "planted-token-77aa21"


class Collect(logging.Handler):
    """Keeps every record it is handed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@tool
def read_settings() -> str:
    """Read the service settings (a tool that exposes its environment)."""
    return f"api_key={os.environ['PLANTED_API_KEY']} token={os.environ['PLANTED_TOKEN']}"


@tool
def call_upstream() -> str:
    """Call an upstream service that rejects the token and quotes it."""
    raise PermissionError(f"upstream rejected token {os.environ['PLANTED_TOKEN']}")


async def test_a_planted_secret_appears_in_no_output(
    llm_server: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PLANTED_API_KEY", API_KEY)
    monkeypatch.setenv("PLANTED_TOKEN", TOKEN)
    config = {
        "Ops": {
            "description": "Service operations.",
            "tools": ["read_settings", "call_upstream"],
        },
        # A ${VAR} where secrets belong: an MCP server's environment (never connected here).
        "mcp_servers": {
            "search": {
                "transport": "stdio",
                "command": "search-server",
                "env": {"SEARCH_TOKEN": "${PLANTED_TOKEN}"},
                "connect": "first_use",
            }
        },
        "model": {
            "provider": "openai",
            "name": "gpt-test",
            "base_url": llm_server.openai_base_url,
            "api_key_env": "PLANTED_API_KEY",
            "max_retries": 1,
        },
    }
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(config))
    llm_server.enqueue(
        Reply(
            body=openai_tool_reply(
                wire_tool_call("call_1", "read_settings", {}),
                wire_tool_call("call_2", "call_upstream", {}),
            )
        )
    )
    # The endpoint then fails, quoting the key and the token in its error.
    llm_server.respond_with(
        Reply(status=500, body=openai_error(f"key {API_KEY} with token {TOKEN} is broken"))
    )
    events: list[RunEvent] = []

    async def sink(event: RunEvent) -> None:
        events.append(event)

    caplog.set_level(logging.DEBUG)
    package_log = Collect()  # on the package logger itself: it may not propagate to caplog's
    package = logging.getLogger("meta_tools")
    level = package.level
    package.addHandler(package_log)
    package.setLevel(logging.DEBUG)
    trace = tmp_path / "trace.jsonl"
    try:
        async with MetaManager.from_config(path, tools=[read_settings, call_upstream]) as meta:
            meta.tracer = Tracer(jsonl=trace, otel=False)
            result = await meta.call_tool(
                "ops", {"objective": "Check the settings", "exact_input": "all"}, on_event=sink
            )
            await meta.tracer.aclose()
    finally:
        package.removeHandler(package_log)
        package.setLevel(level)

    # The run happened as planned: the tools ran, then the model failed.
    assert result.status == "failed"
    assert [(e.tool, e.ok) for e in result.executions] == [
        ("read_settings", True),
        ("call_upstream", False),
    ]
    assert result.executions[0].result == "api_key=*** token=***"
    assert result.executions[1].error == "PermissionError: upstream rejected token ***"
    assert "key *** with token *** is broken" in result.summary
    assert any("retrying" in r.getMessage() for r in package_log.records)  # a line was logged

    outputs: dict[str, str] = {
        "result": result.to_json(),
        "events": json.dumps([e.as_dict() for e in events], default=str),
        "trace": trace.read_text(),
        "logs": "\n".join(
            f"{r.name} {r.getMessage()} {r.exc_text or ''}"
            for r in [*package_log.records, *caplog.records]
        ),
        "llm requests": json.dumps([r.body for r in llm_server.requests]),
        "console": "".join(capsys.readouterr()),
    }
    assert len(llm_server.requests) == 3
    for where, text in outputs.items():
        for secret in (API_KEY, TOKEN):
            assert secret not in text, f"{secret!r} leaked into the {where}"
    # What the LLM was told of the tool results: scrubbed as well.
    tool_messages = [m for m in llm_server.requests[1].body["messages"] if m["role"] == "tool"]
    assert tool_messages[0]["content"].endswith("api_key=*** token=***\n</tool_result>")


def test_a_config_error_quoting_a_bad_value_does_not_show_the_secret_it_came_from() -> None:
    data = {
        "Ops": {"description": "d", "tools": ["t"], "max_iterations": "${LIMIT}"},
        "model": {"timeout_s": "${TIMEOUT}"},
    }
    with pytest.raises(ConfigError) as caught:
        MetaToolsConfig.from_data(data, env={"LIMIT": "lots-of-secret", "TIMEOUT": "hunter2-xyz"})
    text = str(caught.value)
    assert "lots-of-secret" not in text and "hunter2-xyz" not in text
    assert caught.value.problems[0].endswith("(got '***')")


def test_the_redactor_hides_overlapping_secrets_whole_and_ignores_short_values() -> None:
    redactor = Redactor(["abcdef", "abcdefgh-long", "80"])
    assert redactor.text("x abcdefgh-long y abcdef z 8080") == "x *** y *** z 8080"
    assert redactor.value({"k abcdef": ["abcdef", ("abcdefgh-long", 3)]}) == {
        "k ***": ["***", ("***", 3)]
    }
    assert repr(redactor) == "<Redactor secrets=2>"


def test_the_log_filter_scrubs_messages_arguments_and_tracebacks() -> None:
    redactor = Redactor(["s3cr3t-value"])
    logger = logging.getLogger("meta_tools.test_redaction")
    collect = Collect()
    logger.addHandler(collect)
    logger.setLevel(logging.INFO)
    redactor.attach()
    try:
        try:
            raise RuntimeError("boom s3cr3t-value")
        except RuntimeError:
            logger.exception("failed with %s", "s3cr3t-value")
        redactor.detach()
        logger.info("after detach: %s", "s3cr3t-value")
    finally:
        redactor.detach()
        logger.removeHandler(collect)
    first, second = collect.records
    assert first.getMessage() == "failed with ***"
    assert first.exc_text is not None and "RuntimeError: boom ***" in first.exc_text
    assert "s3cr3t-value" not in first.exc_text
    assert second.getMessage() == "after detach: s3cr3t-value"  # detached: no longer filtered
