"""A host passes the user's own request with a category call: `_meta["meta-tools/request"]`."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from meta_tools import CategoryManager, MetaManager, tool
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel
from meta_tools.serve.server import REQUEST_META_KEY, build_server
from tests.mcp.conftest import no_leaks  # noqa: F401

pytestmark = pytest.mark.anyio

MODES = pytest.mark.parametrize("mode", ["auto", "legacy"])
TASK = {"objective": "Convert currency", "exact_input": "100 USD to EUR"}
REQUEST = "Convert 100 USD to EUR with the v3 converter, the one with live bank rates"


@tool
def convert_currency_v2(amount: float, pair: str) -> str:
    """Convert currency amounts by a fixed daily table."""
    return "92 EUR"


@tool
def convert_currency_classic(amount: float, pair: str) -> str:
    """Convert currency amounts (classic converter)."""
    return "92 EUR"


@tool
def convert_currency_v3(amount: float, pair: str) -> str:
    """Live bank rates converter v3."""
    return "92.4 EUR"


def served(model: ScriptedModel) -> MetaManager:
    """One category of three converters, two offered a call (so a shortlist chooses)."""
    tools = [convert_currency_v2, convert_currency_classic, convert_currency_v3]
    category = CategoryManager("Money", "Currency tools.", tools, model, max_tools_per_prompt=2)
    return MetaManager([category])


def answer(request: ChatRequest) -> AssistantTurn:
    return AssistantTurn(text="Converted.")


async def offered_and_task(mode: str, meta: dict[str, Any] | None) -> tuple[list[str], str]:
    model = ScriptedModel.from_function(answer)
    async with served(model) as router, Client(build_server(router), mode=mode) as client:
        result = await client.call_tool("money", TASK, meta=meta)
    assert result.is_error is False
    first = model.requests[0]
    task = next(m.content or "" for m in first.messages if m.role == "user")
    return [t.name for t in first.tools], task


@MODES
async def test_the_request_in_meta_reaches_the_category_shortlist_and_task(mode: str) -> None:
    offered, task = await offered_and_task(mode, {REQUEST_META_KEY: REQUEST})

    assert "convert_currency_v3" in offered
    assert REQUEST in task


@MODES
async def test_without_the_request_the_shortlist_ranks_by_the_objective_alone(mode: str) -> None:
    offered, task = await offered_and_task(mode, None)

    assert "convert_currency_v3" not in offered
    assert "live bank rates" not in task


@MODES
async def test_a_request_that_is_not_a_string_is_an_error_result_naming_the_key(
    mode: str,
) -> None:
    model = ScriptedModel([])
    async with served(model) as router, Client(build_server(router), mode=mode) as client:
        result = await client.call_tool("money", TASK, meta={REQUEST_META_KEY: ["a", "b"]})
    assert result.is_error is True
    assert [c.text for c in result.content] == [  # type: ignore[union-attr]
        "_meta['meta-tools/request'] must be a string (the user's request), not list;"
        " leave it out when there is none"
    ]
    assert model.requests == []
