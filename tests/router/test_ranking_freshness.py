"""The router's ranking follows its categories, and is built off the event loop.

A reload that revokes a category must not leave it ranked (and so reachable through
`any_category` or a retry), and building a ranking over thousands of tools must not
hold the clients of a running router.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router.manager import MetaManager

pytestmark = pytest.mark.anyio


@tool
def read_secret(name: str) -> str:
    """Read a secret value from the vault by its name."""
    return f"secret {name}"


@tool
def weather(city: str) -> str:
    """The weather forecast for a city."""
    return f"sunny in {city}"


CONFIG = {
    "Secrets": {"description": "Read secrets from the vault.", "tools": ["read_secret"]},
    "Weather": {"description": "Weather forecasts.", "tools": ["weather"]},
}


async def test_a_reload_that_revokes_a_category_ranks_without_it_at_once(
    tmp_path: Path, ranking_threads: list[int]
) -> None:
    path = tmp_path / "Meta_tool_config.json"
    path.write_text(json.dumps(CONFIG))
    tools = [read_secret, weather]
    async with MetaManager.from_config(path, tools=tools, model=ScriptedModel([])) as meta:
        assert meta.rank("read the secret from the vault")[0].category.name == "Secrets"
        assert meta.tool_holder("read_secret") is not None
        path.write_text(json.dumps({"Weather": CONFIG["Weather"]}))
        await meta.reload(MetaToolsConfig.load(path))
        ranked = meta.rank("read the secret from the vault")
        assert [r.category.name for r in ranked] == ["Weather"]
        assert meta.tool_holder("read_secret") is None
    main = threading.get_ident()
    assert len(ranking_threads) == 2  # at start, at the reload: never again on a request
    assert [thread == main for thread in ranking_threads] == [False, False]


async def test_a_router_ranking_threads_code_ranks_with_a_ranking_built_at_start_off_the_loop(
    ranking_threads: list[int],
) -> None:
    from meta_tools import CategoryManager

    model = ScriptedModel([])
    managers = [
        CategoryManager("Secrets", "Secrets.", [read_secret], model),
        CategoryManager("Weather", "Weather.", [weather], model),
    ]
    async with MetaManager(managers) as meta:
        for _ in range(3):
            assert meta.rank("forecast for Paris")[0].category.name == "Weather"
    assert len(ranking_threads) == 1
    assert ranking_threads[0] != threading.get_ident()
