"""The retry loop shared by the real clients (`call_with_retries`) and how it judges a failure.

Both HTTP clients (`OpenAIChatModel`, `DashScopeChatModel`) turn off their
SDK's own retries and run every call through `call_with_retries`, so the two
behave alike: exponential backoff with jitter, `Retry-After` honoured, 429,
5xx, connection errors and timeouts retried, everything else raised at once,
and one `ModelError` at the end that names the endpoint and model, never the key.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar
from urllib.parse import urlsplit

import anyio

from ..exceptions import ModelError
from .defaults import BACKOFF_S, MAX_RETRIES
from .keys import is_local_url

__all__ = [
    "Failure",
    "RetryPolicy",
    "call_with_retries",
    "connection_failure",
    "is_retryable_status",
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

    max_retries: int = MAX_RETRIES
    backoff_s: float = BACKOFF_S
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
