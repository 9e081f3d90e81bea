"""The model built from the config's `model` section, with what it leaves out read from the environment."""

from __future__ import annotations

import pytest

from meta_tools.config import ModelConfig
from meta_tools.exceptions import ConfigError
from meta_tools.llm import OpenAIChatModel
from meta_tools.llm.base import GenerationOptions
from meta_tools.router.from_config import model_from_config, with_environment

ENV = {
    "OPENAI_MODEL": "qwen2.5-coder-1.5b",
    "OPENAI_BASE_URL": "http://127.0.0.1:8089/v1",
    "META_TOOLS_TIMEOUT_S": "300",
}


def test_no_model_section_reads_the_openai_environment_variables() -> None:
    config = with_environment(ModelConfig(), ENV)
    assert (config.name, config.base_url, config.timeout_s) == (
        "qwen2.5-coder-1.5b",
        "http://127.0.0.1:8089/v1",
        300.0,
    )


def test_fields_the_config_sets_win_over_the_environment() -> None:
    given = ModelConfig(name="gpt-4o", base_url="https://api.example/v1", timeout_s=30)
    assert with_environment(given, ENV) == given
    dashscope = with_environment(ModelConfig(provider="dashscope", name="qwen-plus"), ENV)
    assert (dashscope.name, dashscope.base_url, dashscope.timeout_s) == ("qwen-plus", None, 300.0)


def test_a_timeout_variable_that_is_no_positive_number_is_named_in_the_error() -> None:
    with pytest.raises(ConfigError, match=r"META_TOOLS_TIMEOUT_S.*positive number.*'soon'"):
        with_environment(ModelConfig(), {"META_TOOLS_TIMEOUT_S": "soon"})


@pytest.mark.anyio
async def test_the_model_options_of_the_config_reach_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    config = ModelConfig.model_validate(
        {
            "name": "local",
            "base_url": "http://127.0.0.1:9/v1",
            "timeout_s": 240,
            "max_tokens": 400,
            "temperature": 0,
            "top_p": 0.8,
            "seed": 1,
            "extra_body": {"cache_prompt": True},
            "recover_text_calls": False,
        }
    )
    model = model_from_config(config)
    assert isinstance(model, OpenAIChatModel)
    assert (model.model, model.timeout, model.recover_text_calls) == ("local", 240, False)
    assert model.options == GenerationOptions(
        max_tokens=400, temperature=0, top_p=0.8, seed=1, extra_body={"cache_prompt": True}
    )
    # Off unless asked for: the loop reads text calls under the `small` guards.
    assert OpenAIChatModel("x", api_key="k").recover_text_calls is False
    await model.aclose()
