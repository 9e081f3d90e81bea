"""What to tell a user whose router has no usable model: the three ways out, with exact config lines.

The same text serves the terminal (`meta-tools run`), the MCP host (an
`isError` result under `meta-tools serve`) and errors raised in code, so a
user meets one set of instructions wherever they hit the problem.
"""

from __future__ import annotations

import mcp_types

from ..config import MetaToolsConfig

__all__ = ["ALTERNATIVES", "WAYS_OUT", "has_model_section", "unsupported_message", "ways_out"]

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


ALTERNATIVES = "Ways out: " + "; ".join(f"({n}) {w}" for n, w in enumerate(ways_out(), 1))
"""The ways out in one sentence, for an error message."""


def unsupported_message(capabilities: mcp_types.ClientCapabilities | None) -> str:
    """Why this host cannot be the categories' model, and what to do instead."""
    sampling = capabilities.sampling if capabilities is not None else None
    missing = "sampling" if sampling is None else "sampling.tools"
    return (
        f"the router's categories use the MCP host's own model (sampling: model.provider"
        f" 'sampling', or no `model` section and no API key),"
        f" but this host did not declare the {missing!r} capability. {ALTERNATIVES}"
    )


def has_model_section(config: MetaToolsConfig) -> bool:
    """Whether the file has a `model` section (else the defaults apply)."""
    return "model" in config.model_fields_set
