"""The router's ranking follows its categories, and is built off the event loop.

A reload that revokes a category must not leave it ranked (and so reachable through
`any_category` or a retry), and building a ranking over thousands of tools must not
hold the clients of a running router.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from meta_tools import tool
from meta_tools.config import MetaToolsConfig
from meta_tools.llm import ScriptedModel
from meta_tools.router import manager as router_manager
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


@pytest.fixture
def built_in(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The threads every ranking of the router was built in."""
    threads: list[int] = []

    class Recorded(router_manager.CategoryRanking):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            threads.append(threading.get_ident())
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(router_manager, "CategoryRanking", Recorded)
    return threads


async def test_a_reload_that_revokes_a_category_ranks_without_it_at_once(
    tmp_path: Path, built_in: list[int]
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
    assert len(built_in) == 2  # at start, at the reload: never again on a request
    assert [thread == main for thread in built_in] == [False, False]


async def test_a_router_built_in_code_ranks_with_a_ranking_built_at_start_off_the_loop(
    built_in: list[int],
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
    assert len(built_in) == 1
    assert built_in[0] != threading.get_ident()
