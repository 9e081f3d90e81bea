"""Build the category loops' model from the config's `model` section (and the environment)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, TypedDict

from ..config import ModelConfig
from ..exceptions import ConfigError
from .base import ChatModel, GenerationOptions
from .defaults import SAMPLING_MAX_TOKENS

__all__ = ["TIMEOUT_ENV", "base_url_of", "model_from_config", "with_environment"]

#: Seconds per model request when the config does not say (`model.timeout_s`).
TIMEOUT_ENV = "META_TOOLS_TIMEOUT_S"


class _ClientSettings(TypedDict, total=False):
    """The keyword arguments both SDK clients take from the config."""

    base_url: str | None
    api_key_env: str
    api_key: str
    timeout: float
    max_retries: int
    backoff_s: float
    options: GenerationOptions
    recover_text_calls: bool


def with_environment(config: ModelConfig, env: Mapping[str, str] | None = None) -> ModelConfig:
    """`config` with the fields it leaves out read from the environment.

    ``OPENAI_MODEL`` and ``OPENAI_BASE_URL`` (OpenAI provider only) and
    ``META_TOOLS_TIMEOUT_S``, like the OpenAI SDK and `example.py` read them.

    Raises:
        ConfigError: ``META_TOOLS_TIMEOUT_S`` is not a positive number.
    """
    env = os.environ if env is None else env
    given = config.model_fields_set
    update: dict[str, Any] = {}
    if config.provider == "openai":
        if "name" not in given and env.get("OPENAI_MODEL"):
            update["name"] = env["OPENAI_MODEL"]
        if base_url_of(config, env) != config.base_url:
            update["base_url"] = base_url_of(config, env)
    raw = env.get(TIMEOUT_ENV)
    if "timeout_s" not in given and raw:
        try:
            timeout = float(raw)
        except ValueError:
            timeout = 0.0
        if not timeout > 0:
            raise ConfigError(
                TIMEOUT_ENV, [f"${TIMEOUT_ENV}: expected a positive number of seconds, got {raw!r}"]
            )
        update["timeout_s"] = timeout
    return config.model_copy(update=update) if update else config


def base_url_of(config: ModelConfig, env: Mapping[str, str] | None = None) -> str | None:
    """Where `config`'s requests go: its `base_url`, else (OpenAI provider) ``OPENAI_BASE_URL``."""
    env = os.environ if env is None else env
    if config.provider == "openai" and "base_url" not in config.model_fields_set:
        return env.get("OPENAI_BASE_URL") or config.base_url
    return config.base_url


def model_from_config(config: ModelConfig) -> ChatModel:
    """An OpenAI-compatible or DashScope client, or the MCP host's model (`sampling`).

    A `sampling` model answers only inside a call served over MCP (`meta-tools serve`);
    elsewhere each call fails with a message naming the alternatives.

    Fields the config leaves out come from the environment (`with_environment`).

    Raises:
        ConfigError: a bad ``META_TOOLS_TIMEOUT_S``.
        ModelError: the API key's environment variable is not set.
    """
    if config.provider == "sampling":
        from .sampling import SamplingChatModel

        return SamplingChatModel(
            max_tokens=config.max_tokens or SAMPLING_MAX_TOKENS,
            temperature=config.temperature,
            timeout_s=config.timeout_s,
        )
    config = with_environment(config)
    settings: _ClientSettings = {
        "base_url": config.base_url,
        "timeout": config.timeout_s,
        "max_retries": config.max_retries,
        "backoff_s": config.backoff_s,
        "options": GenerationOptions(
            max_tokens=config.max_tokens,
            temperature=config.temperature,
            top_p=config.top_p,
            seed=config.seed,
            extra_body=config.extra_body,
        ),
    }
    if config.recover_text_calls is not None:  # otherwise the client's own default
        settings["recover_text_calls"] = config.recover_text_calls
    if config.api_key_env:  # otherwise the client's own default variable
        settings["api_key_env"] = config.api_key_env
    if config.provider == "dashscope":
        from .dashscope import DashScopeChatModel

        return DashScopeChatModel(config.name, **settings)
    from .openai import OpenAIChatModel

    return OpenAIChatModel(config.name, **settings)
