"""The model boundary: `ChatModel`, and the `GenerationOptions` sent with every request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .types import AssistantTurn, ChatRequest

__all__ = ["AnswerLater", "ChatModel", "GenerationOptions"]


class AnswerLater(BaseException):
    """The model answers this request with a later request of the caller, not now.

    Raised by a model whose answer arrives in a later round trip (an MCP host's
    model on the 2026-07-28 protocol); the category loop turns it into `RunSuspended`.
    A `BaseException`, so that no `except Exception` on the way mistakes it for a fault.
    """

    def __init__(self) -> None:
        super().__init__("the model answers with a later request")


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
