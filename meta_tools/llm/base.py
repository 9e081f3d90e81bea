"""The model boundary (`ChatModel`) and the retry loop shared by the real clients.

Both HTTP clients (`OpenAIChatModel`, `DashScopeChatModel`) turn off their
SDK's own retries and run every call through `call_with_retries`, so the two
behave alike: exponential backoff with jitter, `Retry-After` honoured, 429,
5xx, connection errors and timeouts retried, everything else raised at once,
and one `ModelError` at the end that names the endpoint and model, never the key.
"""

from __future__ import annotations

import json
import logging
import os
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from ipaddress import ip_address
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

import anyio

from .._json import loads
from ..exceptions import ModelError
from .types import AssistantTurn, ChatRequest

__all__ = [
    "ChatModel",
    "Failure",
    "GenerationOptions",
    "RetryPolicy",
    "call_with_retries",
    "connection_failure",
    "dump_arguments",
    "is_local_url",
    "is_retryable_status",
    "load_arguments",
    "resolve_api_key",
    "retry_after_from_headers",
]

logger = logging.getLogger("meta_tools.llm")

T = TypeVar("T")

#: Statuses worth another attempt: request timeout, rate limit, server errors.
RETRYABLE_STATUSES = frozenset({408, 429})

#: A server may ask for a long pause; we wait at most this long per retry.
MAX_RETRY_AFTER_S = 60.0

#: A timed-out request is sent once more (a blip), not again and again (a slow model).
MAX_TIMEOUT_RETRIES = 1


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


@dataclass(frozen=True, slots=True)
class Failure:
    """One failed attempt, as the retry loop sees it.

    Attributes:
        cause: A short description for the final error, e.g. ``"HTTP 503: busy"``.
        retryable: Whether another attempt may succeed.
        retry_after: Seconds the server asked us to wait, if it said.
        timed_out: The request ran past the client's timeout; the identical
            request is sent at most once more (a slow model stays slow).
        connect: The connection could not be made: ``"refused"`` (nothing
            listens at the address; not retried on this machine, where no
            network can be in the way) or ``"failed"``; the error then asks
            whether a server listens there.
    """

    cause: str
    retryable: bool
    retry_after: float | None = None
    timed_out: bool = False
    connect: Literal["refused", "failed"] | None = None


def connection_failure(exc: BaseException) -> Failure:
    """The `Failure` of an SDK's connection error, named by the OS error at its root."""
    root: BaseException = exc
    seen = {id(root)}
    while (inner := root.__cause__ or root.__context__) is not None and id(inner) not in seen:
        seen.add(id(inner))
        root = inner
    if isinstance(root, ConnectionRefusedError):
        return Failure("connection refused", retryable=True, connect="refused")
    reason = str(root).strip().rstrip(".") or type(root).__name__
    return Failure(f"cannot connect: {reason}", retryable=True, connect="failed")


def _listening_hint(endpoint: str) -> str:
    """`is a server listening on 127.0.0.1:11434?` for the endpoint's host and port."""
    parts = urlsplit(endpoint)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return "is the base_url right?"
    host = parts.hostname or endpoint
    return f"is a server listening on {host}:{port}?"


def is_retryable_status(status: int) -> bool:
    """True for 408, 429 and every 5xx."""
    return status in RETRYABLE_STATUSES or status >= 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How many times to retry and how long to wait in between.

    The n-th retry (0-based) waits ``backoff_s * 2**n`` seconds, capped at
    ``max_backoff_s``, scaled by a random factor in [0.5, 1.0] so that
    concurrent callers spread out. A server's ``Retry-After`` replaces the
    computed wait (up to `MAX_RETRY_AFTER_S`).
    """

    max_retries: int = 3
    backoff_s: float = 0.5
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries!r}")
        if self.backoff_s < 0:
            raise ValueError(f"backoff_s must be >= 0, got {self.backoff_s!r}")

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (0-based)."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_RETRY_AFTER_S)
        base = min(self.backoff_s * 2.0**retry, self.max_backoff_s)
        return base * random.uniform(0.5, 1.0)


def retry_after_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """Read ``retry-after-ms`` or ``Retry-After`` (in seconds) from response headers.

    Header lookup is case-insensitive when `headers` is an httpx ``Headers``;
    an HTTP-date value is ignored (the computed backoff applies instead).
    """
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) * scale, 0.0)
        except ValueError:
            continue
    return None


def _redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[Exception], Failure | None],
    policy: RetryPolicy,
    endpoint: str,
    model: str,
    secrets: Sequence[str] = (),
    timeout_s: float | None = None,
) -> T:
    """Run `attempt` until it succeeds, retrying the failures `classify` allows.

    Args:
        attempt: Makes one request; called again for each retry.
        classify: Maps an exception from `attempt` to a `Failure`; `None`
            means "not a model failure" and the exception propagates unchanged.
        policy: Retry count and backoff.
        endpoint: The base URL, named in the final error.
        model: The model name, named in the final error.
        secrets: Strings (the API key) scrubbed from every error message.
        timeout_s: The per-attempt timeout, named in the error when attempts time out.

    Raises:
        ModelError: a non-retryable failure, or retries exhausted.
    """
    attempts = policy.max_retries + 1
    timeouts = 0
    for number in range(attempts):
        try:
            return await attempt()
        except Exception as exc:
            failure = classify(exc)
            if failure is None:
                raise
            # The cause is quoted mid-sentence: its own full stop would double the next one.
            cause = _redact(failure.cause, secrets).rstrip(".")
            where = f"model {model!r} at {endpoint!r}"
            if failure.connect is not None:
                cause += f"; {_listening_hint(endpoint)}"
            if not failure.retryable:
                raise ModelError(f"{where} failed (not retried): {cause}") from exc
            if failure.connect == "refused" and is_local_url(endpoint):
                # Nothing listens on this machine's port: a retry a second later finds the same.
                raise ModelError(f"{where} failed (not retried): {cause}") from exc
            timeouts += failure.timed_out
            if failure.timed_out and (timeouts > MAX_TIMEOUT_RETRIES or number == attempts - 1):
                within = f" within {timeout_s:g} s" if timeout_s is not None else ""
                raise ModelError(
                    f"{where} did not answer{within} in {timeouts} attempts: the model is too"
                    " slow for this timeout; raise the timeout (model.timeout_s) or cap the"
                    " reply (model.max_tokens)"
                ) from exc
            if number == attempts - 1:
                raise ModelError(
                    f"{where} failed after {attempts} attempt{'s' if attempts != 1 else ''};"
                    f" last error: {cause}"
                ) from exc
            wait = policy.delay(number, failure.retry_after)
            logger.info(
                "%s: attempt %d/%d failed (%s); retrying in %.2fs",
                where,
                number + 1,
                attempts,
                cause,
                wait,
            )
            await anyio.sleep(wait)
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


def load_arguments(raw: str | None) -> dict[str, Any] | str:
    """Parse tool-call arguments sent as a JSON string.

    An empty string means no arguments. Text that is not a JSON object is
    returned unchanged, so the tool layer can tell the model what was wrong.
    """
    if raw is None or not raw.strip():
        return {}
    try:
        parsed = loads(raw)
    except ValueError:  # also nesting too deep for the decoder
        return raw
    return parsed if isinstance(parsed, dict) else raw


def dump_arguments(arguments: Mapping[str, Any] | str) -> str:
    """Serialise tool-call arguments for the wire; a raw string is sent as it was."""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def is_local_url(url: str | None) -> bool:
    """Whether `url` points at this machine (a local model server needs no key)."""
    host = urlsplit(url).hostname if url else None
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


#: What is sent as the key to a local server when none is set: the SDKs insist on one.
NO_KEY = "no-key"


def resolve_api_key(
    api_key: str | None, api_key_env: str, owner: str, *, base_url: str | None = None
) -> str:
    """Return `api_key`, else the value of the environment variable `api_key_env`.

    A `base_url` on this machine (Ollama, vLLM, llama.cpp) needs no key: without
    one, a placeholder is sent.

    Raises:
        ModelError: neither is set, and `base_url` is not on this machine.
    """
    key = api_key or os.environ.get(api_key_env)
    if not key and is_local_url(base_url):
        return NO_KEY
    if not key:
        raise ModelError(
            f"{owner} has no API key: pass api_key=... or set the environment"
            f" variable {api_key_env!r} (a base_url on this machine needs none)"
        )
    return key
