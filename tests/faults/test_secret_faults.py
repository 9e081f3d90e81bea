"""Secrets with characters that escaping changes (`\\`, `"`, a trailing newline) stay hidden."""

from __future__ import annotations

import json
import logging
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from meta_tools import tool
from meta_tools.cli.checks import check_config
from meta_tools.config import MetaToolsConfig
from meta_tools.llm import AssistantTurn, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from meta_tools.support.redaction import Redactor
from tests.fakes.llm_server import FakeLLMServer

pytestmark = pytest.mark.anyio

AWKWARD = {
    "backslash": "sk-back\\slash-9f3e",
    "quote": 'sk-quo"te-77aa',
    "newline": "sk-newline-5c1d\n",
    "both quotes": 'sk-it\'s-"x"-41',
    "non-ascii": "sk-ключ-секрет",
}


def every_form(secret: str) -> list[str]:
    """How a secret could appear in text after escaping or stripping."""
    return [
        secret,
        secret.strip(),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
        repr(secret.encode())[2:-1],
    ]


def assert_hidden(secret: str, text: str) -> None:
    for form in every_form(secret):
        assert form not in text, f"{form!r} leaked"


@pytest.mark.parametrize("kind", list(AWKWARD))
def test_the_redactor_hides_escaped_repr_and_stripped_forms(kind: str) -> None:
    secret = AWKWARD[kind]
    redactor = Redactor([secret])
    for shown in (
        json.dumps({"token": secret}),
        json.dumps({"token": secret}, ensure_ascii=False),
        repr({"token": secret}),
        repr(f"Bearer {secret}".encode()),
        f"token: {secret.strip()}.",
    ):
        assert_hidden(secret, redactor.text(shown))


@pytest.mark.parametrize("kind", list(AWKWARD))
async def test_a_secret_in_a_dict_returned_by_a_tool_does_not_reach_the_llm_or_the_result(
    kind: str,
) -> None:
    secret = AWKWARD[kind]

    @tool
    def leak() -> dict[str, Any]:
        """Return a dict holding the secret, as a leaky tool would."""
        return {"config": {"token": secret}, "items": [secret, f"Bearer {secret}"]}

    config = MetaToolsConfig.from_data(
        {
            "Ops": {"description": "Ops.", "tools": ["leak"]},
            "mcp_servers": {
                "never": {"command": "x", "env": {"T": "${LEAK_TOKEN}"}, "connect": "first_use"}
            },
        },
        env={"LEAK_TOKEN": secret},
    )
    model = ScriptedModel(
        [AssistantTurn(tool_calls=[ToolCall(name="leak", arguments={})]), AssistantTurn(text="ok")]
    )
    async with MetaManager.from_config(config, tools=[leak], model=model) as meta:
        result = await meta.call_tool("ops", {"objective": "leak", "exact_input": "now"})
    assert "***" in (result.executions[0].result or "")
    assert_hidden(secret, result.to_json())
    assert_hidden(secret, model.requests[1].model_dump_json())
    assert_hidden(secret, json.dumps([m.content for m in model.requests[1].messages]))


@pytest.mark.parametrize("kind", list(AWKWARD))
async def test_validate_output_does_not_show_an_escaped_secret(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = AWKWARD[kind]
    monkeypatch.setenv("BAD_LIMIT", secret)
    path = tmp_path / "Meta_tool_config.json"
    data = {"Ops": {"description": "Ops.", "tools": ["x"], "max_iterations": "${BAD_LIMIT}"}}
    path.write_text(json.dumps(data), encoding="utf-8")
    report = await check_config(path, offline=True)
    assert report.problems
    assert_hidden(secret, "\n".join(report.problems))


async def test_an_mcp_connection_warning_does_not_show_a_header_secret_as_bytes(
    caplog: pytest.LogCaptureFixture, llm_server: FakeLLMServer
) -> None:
    secret = AWKWARD["newline"]
    config = MetaToolsConfig.from_data(
        {
            "Ops": {"description": "Ops.", "tools": ["remote_tool"]},
            "mcp_servers": {
                "remote": {
                    "transport": "streamable_http",
                    "url": llm_server.openai_base_url,  # listening: the headers are sent
                    "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
                    "timeout_s": 5,
                }
            },
        },
        env={"REMOTE_TOKEN": secret},
    )
    caplog.set_level(logging.DEBUG, logger="meta_tools")
    async with MetaManager.from_config(config, model=ScriptedModel([])) as meta:
        warnings = "\n".join(meta.warnings)
        logged = caplog.text
    assert "remote" in warnings
    assert_hidden(secret, warnings)
    assert_hidden(secret, logged)


async def test_a_var_in_a_category_text_reaches_clients_and_the_llm_redacted() -> None:
    secret = "sk-ops-12345678"
    spec = {
        "description": "Ops with key ${OPS_KEY}.",
        "tool_usage_notes": "Use key ${OPS_KEY} for it.",
        "tools": ["echo_back"],
    }
    config = MetaToolsConfig.from_data({"Ops": spec}, env={"OPS_KEY": secret})

    @tool
    def echo_back(text: str) -> str:
        """Echo."""
        return text

    model = ScriptedModel([AssistantTurn(text="nothing to do")])
    meta = MetaManager.from_config(config, tools=[echo_back], model=model)
    listed = json.dumps([t.model_dump(mode="json") for t in meta.list_tools()])
    await meta.call_tool("ops", {"objective": "o", "exact_input": "i"})
    system = model.requests[0].messages[0].content
    assert_hidden(secret, listed)
    assert_hidden(secret, system)
    assert "Ops with key ***." in listed and "Use key *** for it." in system


async def test_the_service_token_from_the_environment_is_a_secret(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "svc-token-4b7e2a"
    monkeypatch.setenv("META_TOOLS_TOKEN", token)

    @tool
    def whoami() -> str:
        """Report the token, as a careless tool could."""
        return f"token={token}"

    config = MetaToolsConfig.from_data({"Ops": {"description": "Ops.", "tools": ["whoami"]}})
    model = ScriptedModel(
        [
            AssistantTurn(tool_calls=[ToolCall(name="whoami", arguments={})]),
            AssistantTurn(text="ok"),
        ]
    )
    meta = MetaManager.from_config(config, tools=[whoami], model=model)
    result = await meta.call_tool("ops", {"objective": "who", "exact_input": "me"})
    assert token not in result.to_json()
    assert result.executions[0].result == "token=***"


async def test_the_token_given_to_serve_is_a_secret_in_results() -> None:
    token = "cli-token-9d8c7b6a"  # as if given with --token: not in the environment

    @tool
    def cmdline() -> str:
        """Report the command line, as a tool reading /proc could."""
        return f"meta-tools serve --token {token}"

    model = ScriptedModel.from_function(
        lambda r: (
            AssistantTurn(text="ok")
            if len(r.messages) > 2
            else AssistantTurn(tool_calls=[ToolCall(name="cmdline", arguments={})])
        )
    )
    meta = MetaManager.from_config(
        MetaToolsConfig.from_data({"Ops": {"description": "Ops.", "tools": ["cmdline"]}}),
        tools=[cmdline],
        model=model,
    )
    headers = {"Authorization": f"Bearer {token}"}
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, meta, transport="http", port=0, token=token))
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            answer = await client.call_tool("ops", {"objective": "show", "exact_input": "it"})
        group.cancel_scope.cancel()
    assert answer.structured_content is not None
    assert answer.structured_content["executions"][0]["result"] == "meta-tools serve --token ***"
    assert token not in model.requests[1].model_dump_json()
