"""What to tell a user whose router has no usable model: the three ways out, with exact config lines.

The same text serves the terminal (`meta-tools run`), the MCP host (an
`isError` result under `meta-tools serve`) and errors raised in code, so a
user meets one set of instructions wherever they hit the problem.
"""

from __future__ import annotations

import os

from ..config import MetaToolsConfig
from .factory import base_url_of
from .keys import is_local_url

__all__ = ["WAYS_OUT", "has_model_section", "is_local_url", "missing_model", "ways_out"]

WAYS_OUT: tuple[tuple[str, str], ...] = (
    (
        "an API key",
        'export OPENAI_API_KEY=sk-...  (or DASHSCOPE_API_KEY with "model": {"provider":'
        ' "dashscope", "name": "qwen-plus"} in the config)',
    ),
    (
        "a local OpenAI-compatible server (Ollama, vLLM, llama.cpp), no key needed",
        '"model": {"provider": "openai", "name": "llama3.2", "base_url": "http://127.0.0.1:11434/v1"}',
    ),
    (
        "the MCP host's own model",
        '"model": {"provider": "sampling"}, served by `meta-tools serve` to a host that'
        " supports sampling with tools",
    ),
)


def ways_out(config: MetaToolsConfig | None = None) -> list[str]:
    """The ways out, one line each: what, then the exact line to write.

    Given the `config`, the way it already takes is left out (a file that says
    `"provider": "sampling"` is not told to write it).
    """
    taken = config.model.provider if config is not None and has_model_section(config) else None
    return [
        f"{what}: {line}"
        for what, line in WAYS_OUT
        if not (taken == "sampling" and '"sampling"' in line)
    ]


def has_model_section(config: MetaToolsConfig) -> bool:
    """Whether the file has a `model` section (else the defaults apply)."""
    return "model" in config.model_fields_set


def serving_fallback(config: MetaToolsConfig) -> str | None:
    """Why a served router uses the host's model (sampling), or None when the config decides.

    Only a file with no `model` section falls back: one that names a provider
    whose key is unset is a mistake to report, not to paper over.
    """
    if has_model_section(config):
        return None
    return missing_model(config, serving=True)


def missing_model(config: MetaToolsConfig, *, serving: bool) -> str | None:
    """Why `config` has no model that can run a category now, or None when it has one.

    Args:
        config: the loaded config.
        serving: True under `meta-tools serve` (where `sampling` works).
    """
    model = config.model
    if model.provider == "sampling":
        if serving:
            return None
        return (
            "model.provider 'sampling' uses the model of the MCP host, which exists only"
            " under `meta-tools serve`"
        )
    env = model.key_env
    if env is None or os.environ.get(env) or is_local_url(base_url_of(model)):
        return None
    if not has_model_section(config):
        return (
            f"there is no `model` section, and the default model ({model.provider}"
            f" {model.name!r}) needs the environment variable {env!r}, which is not set"
        )
    return f"the `model` section's key variable {env!r} is not set"
