"""What is known of a model, as data, and the guard profile it calls for.

A `ModelProfile` holds facts about a family of models (does it write tool calls
as text, does it call tools natively, several at once) and the guard profile
those facts call for. `choose_profile` picks one from what is known before the
first request: the model's name as configured or as its server reports it, the
provider, and where the server runs. The choice carries its reason in words, so
that banners, `list` and traces can say why.

Capable models first: nothing known about a model means `capable` (no guard).
A name nobody gave is asked of the server (`OpenAIChatModel.served_models`): local
servers (llama.cpp, Ollama, vLLM) report the model they serve, and its name
usually says its size.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from .keys import is_local_url
from .wrapper import innermost

__all__ = [
    "CAPABLE",
    "SMALL",
    "SMALL_BELOW_B",
    "ModelProfile",
    "ProfileChoice",
    "choice_for_model",
    "choose_profile",
    "model_name",
    "parameters_b",
]

GuardProfile = Literal["capable", "small"]

SMALL_BELOW_B = 10.0
"""Models with fewer parameters (billions) get the small-model guards: the 1.5B solves
38 to 39 of 45 demo tasks with them and none without; 1.5B to 8B models behind Ollama or
llama.cpp write tool calls as text at times."""


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """Facts about a family of models, and the guard profile they call for.

    Attributes:
        family: what the facts are about, as people name it.
        calls_as_text: writes tool calls as text at times (bare JSON, a fence).
        native_tools: calls tools through the API's tool-calling interface.
        parallel_calls: makes several calls in one turn when a task needs them.
        guards: the guard profile these facts call for.
    """

    family: str
    calls_as_text: bool
    native_tools: bool
    parallel_calls: bool
    guards: GuardProfile


CAPABLE = ModelProfile("capable", False, True, True, "capable")
SMALL = ModelProfile("small", True, True, False, "small")


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """The guard profile in force, and why: shown once in banners, `list` and traces.

    Attributes:
        guards: the guard profile's name.
        reason: why, in a few words ("qwen2.5-coder-1.5b: 1.5B parameters").
        model: the model's name the choice was made from (None: unknown).
        profile: the model profile chosen (None: the config or the code chose).
    """

    guards: str
    reason: str
    model: str | None = None
    profile: ModelProfile | None = None

    def line(self) -> str:
        """`guard profile 'small' (qwen2.5-coder-1.5b: 1.5B parameters)`."""
        return f"guard profile {self.guards!r} ({self.reason})"


# A family's name in a model's name, with no size in it: Ollama's default tags and the
# hosted families that call tools natively.
_SIZE_OF_TAG: dict[str, float] = {
    "llama3.2": 3,
    "llama3.1": 8,
    "llama3": 8,
    "phi3": 3.8,
    "phi4-mini": 3.8,
    "qwen2.5": 7,
    "qwen2.5-coder": 7,
    "qwen3": 8,
    "mistral": 7,
    "gemma2": 9,
    "gemma3": 4,
}
_HOSTED = re.compile(
    r"^(gpt-[45]|gpt-oss|o[134]\b|o[134]-|chatgpt|claude|gemini|deepseek|qwen-(max|plus|turbo|long)"
    r"|qwen3-(max|coder-plus)|mistral-(large|medium)|grok|command-r|glm-4|kimi|moonshot)",
)
_SIZE = re.compile(r"(?:(\d+)x)?(\d+(?:\.\d+)?)\s*b(?![a-z])")
_PATH_TAIL = re.compile(r"[\\/]")


def parameters_b(name: str) -> float | None:
    """The parameters a model's name says it has, in billions (`qwen2.5-coder:1.5b` → 1.5,
    `Llama-3.3-70B-Instruct` → 70, `mixtral-8x7b` → 56, `Qwen3-30B-A3B` → 30); None when
    it says none. A GGUF file's path counts by its file name."""
    tail = _PATH_TAIL.split(name.lower())[-1]
    sizes = [
        float(base) * (int(times) if times else 1)
        for times, base in _SIZE.findall(tail.replace("_", "-"))
    ]
    if sizes:
        return max(sizes)
    base, _, tag = tail.partition(":")
    if tag in ("", "latest"):
        return _SIZE_OF_TAG.get(base)
    return None


def choose_profile(name: str | None, *, provider: str, base_url: str | None) -> ProfileChoice:
    """The guard profile for a model, from what is known of it before its first request.

    Args:
        name: the model's name as configured or as its server reports it; None when
            neither says (the client sends a default name the server may ignore).
        provider: `openai`, `dashscope` or `sampling` (the MCP host's model).
        base_url: where requests go (None: the provider's own service).
    """
    if provider == "sampling":
        return ProfileChoice("capable", "the MCP host's own model", None, CAPABLE)
    if name is None:
        where = "on this machine" if is_local_url(base_url) else "of the provider"
        return ProfileChoice(
            "capable",
            f"nothing known of the model {where}: no name was given and its server named none",
            None,
            CAPABLE,
        )
    size = parameters_b(name)
    if size is not None:
        small = size < SMALL_BELOW_B
        profile = SMALL if small else CAPABLE
        return ProfileChoice(profile.guards, f"{name}: {size:g}B parameters", name, profile)
    if _HOSTED.match(_PATH_TAIL.split(name.lower())[-1]):
        return ProfileChoice("capable", f"{name}: a hosted model family", name, CAPABLE)
    return ProfileChoice("capable", f"{name}: nothing known says it is small", name, CAPABLE)


def choice_for_model(model: object) -> ProfileChoice:
    """The guard profile a model client calls for, from the name it sends and where it
    sends it (a model passed in code: its name is given), looking through wrappers."""
    model = innermost(model)
    base_url = getattr(model, "base_url", None)
    provider = "sampling" if getattr(model, "ways_out", None) is not None else "openai"
    return choose_profile(
        model_name(model),
        provider=provider,
        base_url=base_url if isinstance(base_url, str) else None,
    )


def model_name(model: object) -> str | None:
    """The name a model client sends with its requests (`OpenAIChatModel.model`), if any."""
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else None
