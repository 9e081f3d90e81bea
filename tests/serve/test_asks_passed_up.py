"""Served: a level-1 server's questions during a category call go up to the MCP host that made it."""

from __future__ import annotations

from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext

from meta_tools.config import MetaToolsConfig
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.asks import HostAnswers
from meta_tools.serve.server import build_server, serve_router
from meta_tools.tools.mcp.connection import McpToolSource
from meta_tools.tools.mcp.model_sampling import ModelSampling
from tests.mcp.conftest import no_leaks  # noqa: F401  (the MCP tests' leak check, here too)
from tests.servers import asking

pytestmark = pytest.mark.anyio

TASK = {"objective": "Book a table", "exact_input": "Lyon"}


def router(tool: str, arguments: dict[str, Any], host: HostAnswers | None = None) -> MetaManager:
    """A router whose one category calls `tool` of the asking server, then sums up."""

    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) == 2:
            return AssistantTurn(tool_calls=[ToolCall(name=tool, arguments=arguments)])
        return AssistantTurn(text="Done.")

    host = host or HostAnswers()
    source = McpToolSource(
        "asking",
        asking.build(),  # type: ignore[arg-type]
        mode="legacy",
        elicitation=host.elicit,
        sampling=host.sample,
    )
    config = MetaToolsConfig.from_data(
        {"Dining": {"description": "Tables.", "tools": [tool]}}, source="test.json"
    )
    return MetaManager.from_config(
        config, model=ScriptedModel.from_function(answer), sources=[source]
    )


class HostUser:
    """The host's user, as an elicitation callback: answers from a fixed result, records questions."""

    def __init__(self, result: mcp_types.ElicitResult) -> None:
        self.result = result
        self.questions: list[str] = []

    async def __call__(
        self, ctx: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult:
        self.questions.append(params.message)
        return self.result


async def executions(client: Client) -> list[dict[str, Any]]:
    result = await client.call_tool("Dining", TASK)
    assert result.structured_content is not None
    found: list[dict[str, Any]] = result.structured_content["executions"]
    return [{k: e.get(k) for k in ("tool", "ok", "result", "error")} for e in found]


async def test_a_legacy_host_that_declared_elicitation_answers_and_its_answer_goes_down() -> None:
    user = HostUser(mcp_types.ElicitResult(action="accept", content={"people": 6}))
    async with (
        router("book_table", {"city": "Lyon"}) as meta,
        Client(build_server(meta), mode="legacy", elicitation_callback=user) as client,
    ):
        done = await executions(client)
    assert user.questions == ["How many people, and when, for the table in Lyon?"]
    assert done == [
        {
            "tool": "book_table",
            "ok": True,
            "result": '{"result": "booked in Lyon for 6 at 19:00"}',
            "error": None,
        }
    ]


async def test_a_host_that_declined_sends_the_decline_down() -> None:
    user = HostUser(mcp_types.ElicitResult(action="decline"))
    async with (
        router("book_table", {"city": "Lyon"}) as meta,
        Client(build_server(meta), mode="legacy", elicitation_callback=user) as client,
    ):
        done = await executions(client)
    assert [d["result"] for d in done] == ['{"result": "not booked: the user answered decline"}']


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("legacy", "the MCP host did not declare form elicitation"),
        ("auto", "the MCP host connected with protocol 2026-07-28"),
    ],
)
async def test_a_host_that_cannot_be_asked_gets_a_declined_question_the_model_read(
    mode: str, why: str
) -> None:
    async with router("book_table", {"city": "Lyon"}) as meta:
        options: dict[str, Any] = {}
        if mode == "auto":
            options["elicitation_callback"] = HostUser(mcp_types.ElicitResult(action="cancel"))
        async with Client(build_server(meta), mode=mode, **options) as client:
            (done,) = await executions(client)
    assert done["ok"] is False
    assert (
        "MCP server 'asking' asked for input from the user ('How many people, and when, for the"
        " table in Lyon?'); meta-tools declined: " + why
    ) in done["error"]


async def test_a_level_1_servers_progress_reaches_the_host_as_the_calls_progress() -> None:
    lines: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        lines.append(message or "")

    async with (
        router("count", {"steps": 2}) as meta,
        Client(build_server(meta), mode="legacy") as client,
    ):
        await client.call_tool("Dining", TASK, progress_callback=on_progress)
    assert [line for line in lines if line.startswith("asking/")] == [
        "asking/count: 1/2 step 1",
        "asking/count: 2/2 step 2",
    ]


async def test_a_legacy_host_that_declared_sampling_answers_a_level_1_servers_sampling() -> None:
    async def host_model(
        ctx: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResult:
        return mcp_types.CreateMessageResult(
            role="assistant", model="host", content=mcp_types.TextContent(text="azure")
        )

    async with (
        router("one_word", {"topic": "sky"}) as meta,
        Client(build_server(meta), mode="legacy", sampling_callback=host_model) as client,
    ):
        done = await executions(client)
    assert [d["result"] for d in done] == ['{"result": "azure"}']


async def test_the_served_router_gives_its_mcp_servers_the_hosts_answers() -> None:
    config = MetaToolsConfig.from_data(
        {
            "Dining": {"description": "Tables.", "tools": ["book_table"]},
            "model": {"provider": "openai", "name": "m", "base_url": "http://127.0.0.1:9/v1"},
            "mcp_servers": {"asking": {"transport": "stdio", "command": "python"}},
        },
        source="test.json",
    )
    (source,) = serve_router(config).sources
    assert source.calls.elicitation is not None and source.calls.sampling is not None


async def test_a_sampling_request_the_host_cannot_answer_goes_to_the_routers_own_model() -> None:
    own = ScriptedModel([AssistantTurn(text="teal")])
    host = HostAnswers(sampling=ModelSampling(own))
    async with (
        router("one_word", {"topic": "sea"}, host) as meta,
        Client(build_server(meta), mode="legacy") as client,
    ):
        done = await executions(client)
    assert [d["result"] for d in done] == ['{"result": "teal"}']
    assert own.remaining == 0
