"""2026-07-28 sampling without waiting: between two model answers a category run is data.

On the 2026-07-28 protocol a server cannot ask the client mid-call: it returns
`InputRequiredResult` (the sampling request) and the client answers in a new
`tools/call` carrying the `request_state` it was given. Here that state *is*
the run (`SuspendedRun`: messages, executions, failure counts, round, offered
tools), so any replica that gets the retry can go on with it, and nothing
waits on the server between two requests. Tools run inside one request.

The state is JSON, compressed, bounded (`max_state_bytes`), then sealed by the
SDK's `RequestStateBoundary`: AES-256-GCM under a key every replica shares
(`serve.state_keys` or `META_TOOLS_STATE_KEY`; the first seals, all open, for
rotation), expiring after `state_ttl_s`, bound to the tool and its arguments,
to the client's token and to the deployment: this service's name and a digest
of its categories and their tool lists (`Deployment`), so that another
deployment sharing the key refuses it unless it offers the same categories
with the same tools. A tampered, expired or foreign state is refused with
`INVALID_PARAMS` and a message saying to call the tool again; the reason goes
to the log only. A state works once (see `replay`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import zlib
from collections.abc import Sequence
from typing import Any

import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.methods import INPUT_REQUIRED_METHODS
from pydantic import ValidationError

from ..category.suspend import SuspendedRun
from ..config import ServeConfig, short_state_key
from ..exceptions import ConfigError
from ..llm.base import AnswerLater
from ..router.manager import MetaManager
from .http import token_holder
from .replay import UsedStates

__all__ = [
    "SAMPLE_KEY",
    "STATE_KEY_ENV",
    "DeferredHost",
    "Deployment",
    "SealedStateBoundary",
    "StateCodec",
    "StateError",
    "answer_of",
    "state_keys",
    "state_security",
]

logger = logging.getLogger("meta_tools.server")

SAMPLE_KEY = "sample"
"""The key of the one sampling request in each `InputRequiredResult`."""

_PREFIX = "z1."
_REFUSED = (
    "this call's request_state is invalid, expired or from another deployment (it is sealed,"
    " expires after {ttl:g} s and works only for the same tool, arguments, token and"
    " deployment); call the tool again from the start"
)
_USED = (
    "this call's request_state was used already: each one works once, so that a step's"
    " tools never run twice; call the tool again from the start"
)


class StateError(Exception):
    """A suspended run cannot be carried: too large to send, or not one we wrote."""


class StateCodec:
    """A `SuspendedRun` as compact text (JSON, zlib, base64url), at most `max_bytes` long."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    def dump(self, point: SuspendedRun) -> str:
        """Raises StateError when the run's state is above `max_bytes`."""
        packed = zlib.compress(point.model_dump_json().encode(), level=6)
        text = _PREFIX + base64.urlsafe_b64encode(packed).decode().rstrip("=")
        if len(text) > self.max_bytes:
            raise StateError(
                f"this call's state grew to {len(text):,} bytes, above serve.max_state_bytes"
                f" ({self.max_bytes:,}); raise that limit, or lower defaults.max_result_chars"
                " or the category's max_iterations"
            )
        return text

    def load(self, text: str) -> SuspendedRun:
        """Raises StateError for anything `dump` did not write (after the seal was checked)."""
        if not text.startswith(_PREFIX) or len(text) > self.max_bytes:
            raise StateError("not a suspended run of this router")
        try:
            raw = base64.urlsafe_b64decode(text[len(_PREFIX) :] + "=" * (-len(text) % 4))
            inflater = zlib.decompressobj()
            data = inflater.decompress(raw, 64 * self.max_bytes)  # bounded, even if inflated
            if inflater.unconsumed_tail:
                raise StateError("the suspended run is too large")
            return SuspendedRun.model_validate_json(data)
        except (ValueError, zlib.error, ValidationError) as exc:
            raise StateError(f"not a suspended run of this router: {exc}") from None


def _token_principal(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The request's token holder: a state works only for the token it was issued to."""
    return token_holder(ctx.request)


STATE_KEY_ENV = "META_TOOLS_STATE_KEY"
"""Where `serve` finds the replicas' shared state key when the config has no `serve.state_keys`."""


def state_keys(settings: ServeConfig) -> list[str]:
    """The config's state keys, else the one in `META_TOOLS_STATE_KEY`, else none (one replica).

    Raises:
        ConfigError: the variable's key is shorter than 32 bytes.
    """
    if settings.state_keys:
        return settings.state_keys
    key = os.environ.get(STATE_KEY_ENV, "")
    if key and (why := short_state_key(key)):
        raise ConfigError(STATE_KEY_ENV, [f"the key is {why}"])
    return [key] if key else []


def state_security(keys: Sequence[str], ttl_s: float) -> RequestStateSecurity:
    """Sealing under the shared `keys` (first seals, all open), or a per-process key if none."""
    ring: list[str | bytes] = [*keys] or [os.urandom(32)]
    return RequestStateSecurity(keys=ring, ttl=ttl_s, bind_principal=_token_principal)


class Deployment:
    """Who a sealed state belongs to: the service's name and a digest of what it serves.

    The digest covers each category's name and tool list, as the config writes
    them (patterns included), or the tools' names for categories built in code;
    it follows hot reloads. Replicas of one config agree; a deployment whose
    categories differ (staging with a tool production lacks) does not.
    """

    def __init__(self, name: str, meta: MetaManager) -> None:
        self._name = name
        self._meta = meta
        self._seen: tuple[object, ...] = ()
        self._audience = ""

    def audience(self) -> str:
        """The audience sealed into this deployment's states (computed again after a change)."""
        config = self._meta.config
        now: tuple[object, ...] = (config, *self._meta.categories)
        same = len(now) == len(self._seen) and all(
            a is b for a, b in zip(now, self._seen, strict=True)
        )
        if not same:
            if config is not None:
                lists = {name: sorted(c.tools) for name, c in config.categories.items()}
            else:
                lists = {
                    m.name: sorted(t.name for t in m.tools.list_tools())
                    for m in self._meta.categories
                }
            text = json.dumps(lists, sort_keys=True, ensure_ascii=False)
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
            self._seen, self._audience = now, f"{self._name}/{digest}"
        return self._audience


class SealedStateBoundary:
    """The SDK's `RequestStateBoundary` for this deployment; each state opens once.

    Its refusals tell the client what to do.
    """

    def __init__(
        self, security: RequestStateSecurity, *, deployment: Deployment, used: UsedStates
    ) -> None:
        self._security = security
        self._deployment = deployment
        self._used = used
        self._boundary: tuple[str, RequestStateBoundary] | None = None
        self._message = _REFUSED.format(ttl=security.ttl)

    def _current(self) -> RequestStateBoundary:
        audience = self._deployment.audience()
        if self._boundary is None or self._boundary[0] != audience:
            boundary = RequestStateBoundary(self._security, default_audience=audience)
            self._boundary = (audience, boundary)
        return self._boundary[1]

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.method not in INPUT_REQUIRED_METHODS:
            return await call_next(ctx)
        sealed = (ctx.params or {}).get("requestState")

        async def first_use(opened: ServerRequestContext[Any, Any]) -> HandlerResult:
            # Reached only once the seal, expiry, binding and audience were checked.
            if isinstance(sealed, str) and not await self._used.claim(sealed, self._security.ttl):
                raise MCPError(
                    code=mcp_types.INVALID_PARAMS,
                    message=_USED,
                    data={"reason": "used_request_state"},
                )
            return await call_next(opened)

        try:
            return await self._current()(ctx, first_use)
        except MCPError as exc:
            if exc.error.data != {"reason": "invalid_request_state"}:
                raise
            raise MCPError(
                code=mcp_types.INVALID_PARAMS, message=self._message, data=exc.error.data
            ) from None


class DeferredHost:
    """A 2026-07-28 request's sampling host: the client's answer (if it sent one), then later.

    The first sampling request of a round gets `answer`, the one the client
    gave to the request the run stopped at; the next one (or the first, when
    there is no answer) raises `AnswerLater`, which stops the run; that request
    is kept in `deferred`, to send to the client.
    """

    def __init__(self, answer: mcp_types.CreateMessageResultWithTools | None = None) -> None:
        self._answer = answer
        self.deferred: mcp_types.CreateMessageRequestParams | None = None

    async def create_message(
        self, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        answer, self._answer = self._answer, None
        if answer is None:
            self.deferred = params
            raise AnswerLater
        return answer


def answer_of(params: mcp_types.CallToolRequestParams) -> mcp_types.CreateMessageResultWithTools:
    """The client's answer to our sampling request, from its retry.

    Raises:
        StateError: the retry carries no answer, or not a sampling result.
    """
    answer = (params.input_responses or {}).get(SAMPLE_KEY)
    if answer is None:
        raise StateError(f"the retry carries no answer for {SAMPLE_KEY!r}")
    try:
        return mcp_types.CreateMessageResultWithTools.model_validate(
            answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        )
    except ValidationError as exc:
        raise StateError(
            f"the host's answer is not a sampling result: {exc.error_count()} problem(s)"
        ) from None
