"""The guard profile a router chooses from its model, and the name it asks the server for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meta_tools import tool
from meta_tools.agent import MainAgent
from meta_tools.category.manager import CategoryManager
from meta_tools.llm import ScriptedModel
from meta_tools.llm.openai import OpenAIChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.tools.pack import ToolPack
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_text_reply

SMALL_NAME = "qwen2.5-coder-1.5b"

pytestmark = pytest.mark.anyio


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@pytest.fixture(autouse=True)
def no_model_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_MODEL", "OPENAI_BASE_URL", "META_TOOLS_TIMEOUT_S"):
        monkeypatch.delenv(name, raising=False)


def config(tmp_path: Path, server: FakeLLMServer, **sections: Any) -> Path:
    model = {"provider": "openai", "base_url": server.openai_base_url, **sections.pop("model", {})}
    data = {"model": model, **sections, "Maths": {"description": "Numbers.", "tools": ["add"]}}
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(data))
    return path


async def test_an_unnamed_model_takes_the_name_its_server_serves_and_the_profile_it_calls_for(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = [SMALL_NAME]
    llm_server.enqueue(Reply(body=openai_text_reply("hello")))
    async with MetaManager.from_config(config(tmp_path, llm_server), tools=[add]) as meta:
        assert meta.served_model == SMALL_NAME
        assert meta.profile_choice.line() == (
            f"guard profile 'small' ({SMALL_NAME}: 1.5B parameters)"
        )
        assert "text_calls" in meta.get_category("maths").guards.enabled
        agent = MainAgent(meta.model, meta)
        assert "told_to_use" in agent.guards.enabled
        await agent.ask("hi")
    # the served name is the one sent from then on (Ollama refuses any other)
    assert [r.body["model"] for r in llm_server.requests] == [SMALL_NAME]


async def test_before_it_starts_the_router_knows_no_served_name_and_runs_no_guard(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = [SMALL_NAME]
    meta = MetaManager.from_config(config(tmp_path, llm_server), tools=[add])
    agent = MainAgent(meta.model, meta)  # made before the start, as `chat` makes it
    assert meta.served_model is None and agent.guards.profile == "capable"
    async with meta:
        assert agent.guards.profile == "small"


async def test_the_configs_guards_profile_wins_over_what_the_model_calls_for(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = [SMALL_NAME]
    path = config(tmp_path, llm_server, guards={"profile": "capable"})
    async with MetaManager.from_config(path, tools=[add]) as meta:
        assert meta.profile_choice.guards == "capable"
        assert meta.profile_choice.reason == f"set in {path}: guards.profile"
        assert meta.get_category("maths").guards.enabled == frozenset()


async def test_a_guards_section_without_a_profile_adjusts_the_chosen_one(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    path = config(
        tmp_path, llm_server, model={"name": "llama3.2:3b"}, guards={"disable": ["round_cap"]}
    )
    async with MetaManager.from_config(path, tools=[add]) as meta:
        guards = meta.get_category("maths").guards
        assert guards.profile == "small"
        assert "text_calls" in guards.enabled and "round_cap" not in guards.enabled


async def test_a_named_model_is_not_renamed_by_its_server(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = [SMALL_NAME]
    path = config(tmp_path, llm_server, model={"name": "gpt-4o"})
    async with MetaManager.from_config(path, tools=[add]) as meta:
        assert meta.served_model is None
        assert meta.profile_choice.guards == "capable"
        assert meta.profile_choice.reason == "gpt-4o: a hosted model family"


async def test_a_server_with_several_models_is_not_guessed_at_and_the_warning_says_so(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    llm_server.models = ["llama3.2:3b", "qwen2.5:72b"]
    async with MetaManager.from_config(config(tmp_path, llm_server), tools=[add]) as meta:
        assert meta.served_model is None
        assert meta.profile_choice.guards == "capable"
        assert any(
            "serves 2 models (llama3.2:3b, qwen2.5:72b); set model.name" in w for w in meta.warnings
        )


async def test_a_server_that_lists_no_models_leaves_the_default(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    # llm_server.models is None: GET /v1/models answers 404
    async with MetaManager.from_config(config(tmp_path, llm_server), tools=[add]) as meta:
        assert meta.served_model is None
        assert meta.profile_choice.guards == "capable"
        assert "nothing known of the model on this machine" in meta.profile_choice.reason


def test_a_category_built_in_code_follows_its_models_name_unless_told() -> None:
    local = "http://127.0.0.1:9/v1"
    pack = ToolPack([add], name="Maths")
    small = OpenAIChatModel("qwen2.5-coder:1.5b", base_url=local)
    assert CategoryManager("Maths", "Numbers.", pack, small).guards.profile == "small"
    assert CategoryManager("Maths", "Numbers.", pack, small, guards="capable").guards.enabled == (
        frozenset()
    )
    big = OpenAIChatModel("Llama-3.3-70B-Instruct", base_url=local)
    assert CategoryManager("Maths", "Numbers.", pack, big).guards.profile == "capable"
    scripted = ScriptedModel([])
    assert CategoryManager("Maths", "Numbers.", pack, scripted).guards.profile == "capable"


def test_a_main_agent_over_categories_in_code_follows_its_own_model() -> None:
    meta = MetaManager([])
    small = OpenAIChatModel("llama3.2", base_url="http://127.0.0.1:9/v1")
    agent = MainAgent(small, meta)
    assert agent.guards.profile == "small"
    assert agent.profile_choice.reason == "llama3.2: 3B parameters"
    assert MainAgent(small, meta, guards="capable").guards.profile == "capable"
    assert MainAgent(ScriptedModel([]), meta).guards.profile == "capable"
