"""The model boundary: `ChatModel`, and the `GenerationOptions` sent with every request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .types import AssistantTurn, ChatRequest

__all__ = ["ChatModel", "GenerationOptions"]


@runtime_checkable
class ChatModel(Protocol):
    """Anything that answers a chat request with one assistant turn."""

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """Send the conversation and offered tools; return the model's turn.

        Raises:
            ModelError: the model could not answer (after any retries).
        """
        ...


@dataclass(frozen=True, slots=True)
class GenerationOptions:
    """How the model generates, sent with every request; None leaves the server's default.

    Attributes:
        max_tokens: Cap on the reply's tokens (a small model left unbounded can
            write thousands in one turn).
        temperature: Sampling temperature.
        top_p: Nucleus sampling.
        seed: For repeatable sampling, where the server supports it.
        extra_body: Provider-specific fields merged into the request body.
    """

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    extra_body: Mapping[str, Any] | None = None
