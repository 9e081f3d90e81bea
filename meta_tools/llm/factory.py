"""Build the category loops' model from the config's `model` section."""

from __future__ import annotations

import os
from typing import TypedDict

from ..config import ModelConfig
from .base import ChatModel
from .ways_out import is_local_url

__all__ = ["model_from_config"]


class _ClientSettings(TypedDict, total=False):
    """The keyword arguments both SDK clients take from the config."""

    base_url: str | None
    api_key_env: str
    api_key: str
    timeout: float
    max_retries: int
    backoff_s: float


def model_from_config(config: ModelConfig) -> ChatModel:
    """An OpenAI-compatible or DashScope client, or the MCP host's model (`sampling`).

    A `sampling` model answers only inside a call served over MCP (`meta-tools serve`);
    elsewhere each call fails with a message naming the alternatives.

    Raises:
        ModelError: the API key's environment variable is not set.
    """
    if config.provider == "sampling":
        from .sampling import SamplingChatModel

        return SamplingChatModel(timeout_s=config.timeout_s)
    settings: _ClientSettings = {
        "base_url": config.base_url,
        "timeout": config.timeout_s,
        "max_retries": config.max_retries,
        "backoff_s": config.backoff_s,
    }
    if config.api_key_env:  # otherwise the client's own default variable
        settings["api_key_env"] = config.api_key_env
    if _keyless(config):
        settings["api_key"] = "no-key"  # the SDK insists on one; a local server ignores it
    if config.provider == "dashscope":
        from .dashscope import DashScopeChatModel

        return DashScopeChatModel(config.name, **settings)
    from .openai import OpenAIChatModel

    return OpenAIChatModel(config.name, **settings)


def _keyless(config: ModelConfig) -> bool:
    """A local OpenAI-compatible server (Ollama, vLLM, llama.cpp) with no key set: none needed."""
    env = config.key_env
    return (
        config.provider == "openai"
        and is_local_url(config.base_url)
        and not (env and os.environ.get(env))
    )
