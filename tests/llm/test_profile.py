"""Model profiles: what a model's name says of it, and the guard profile chosen from it."""

from __future__ import annotations

import pytest

from meta_tools.llm.profile import CAPABLE, SMALL, choose_profile, parameters_b

LOCAL = "http://127.0.0.1:8089/v1"


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("qwen2.5-coder-1.5b", 1.5),  # llama.cpp's alias as our serve script sets it
        ("qwen2.5-coder:1.5b", 1.5),  # Ollama
        ("Qwen/Qwen2.5-Coder-1.5B-Instruct", 1.5),  # vLLM, Hugging Face ids
        ("/root/.cache/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", 1.5),  # llama.cpp's own
        ("meta-llama/Llama-3.3-70B-Instruct", 70),
        ("mixtral-8x7b-instruct", 56),
        ("Qwen3-30B-A3B", 30),  # a mixture of experts counts by its whole size
        ("gemma-3-27b-it", 27),
        ("qwen2.5:14b", 14),
        ("llama3.2", 3),  # Ollama's default tags name no size
        ("llama3.2:latest", 3),
        ("qwen2.5-coder", 7),
        ("gpt-4o", None),
        ("gpt-4o-mini", None),
        ("claude-sonnet-4-5", None),
        ("phi3:mini", None),
        ("my-model", None),
    ],
)
def test_a_models_name_says_its_size_when_it_has_one(name: str, size: float | None) -> None:
    assert parameters_b(name) == size


@pytest.mark.parametrize(
    ("name", "guards"),
    [
        ("qwen2.5-coder-1.5b", "small"),
        ("qwen2.5-coder:0.5b", "small"),
        ("llama3.1:8b", "small"),
        ("llama3.2", "small"),
        ("Qwen/Qwen2.5-14B-Instruct", "capable"),
        ("meta-llama/Llama-3.3-70B-Instruct", "capable"),
        ("gpt-4o", "capable"),
        ("gpt-4o-mini", "capable"),
        ("claude-opus-4", "capable"),
        ("qwen-plus", "capable"),
        ("deepseek-chat", "capable"),
        ("my-model", "capable"),  # nothing known: capable models first
    ],
)
def test_the_guard_profile_follows_what_the_name_says(name: str, guards: str) -> None:
    choice = choose_profile(name, provider="openai", base_url=LOCAL)
    assert choice.guards == guards
    assert choice.model == name
    assert choice.profile is (SMALL if guards == "small" else CAPABLE)
    assert choice.reason.startswith(f"{name}: ")


def test_the_reason_names_the_size_it_was_chosen_by() -> None:
    choice = choose_profile("qwen2.5-coder-1.5b", provider="openai", base_url=LOCAL)
    assert choice.line() == "guard profile 'small' (qwen2.5-coder-1.5b: 1.5B parameters)"
    assert choice.profile is not None and choice.profile.calls_as_text


def test_a_model_nobody_named_is_capable_and_the_reason_says_nothing_is_known() -> None:
    choice = choose_profile(None, provider="openai", base_url=LOCAL)
    assert choice.guards == "capable"
    assert "nothing known of the model on this machine" in choice.reason


def test_the_hosts_own_model_is_capable_whatever_it_is_called() -> None:
    choice = choose_profile("qwen2.5-coder-1.5b", provider="sampling", base_url=None)
    assert (choice.guards, choice.reason) == ("capable", "the MCP host's own model")
