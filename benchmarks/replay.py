"""Replies of a real model kept in a file and given again for the same request
(`--replay FILE` of `e2e` and `bfcl`; the benchmarks only, never the product).

llama.cpp at temperature 0 is not repeatable run to run: two runs of the demo set on
one code base differed at the 9th model call, on the same prompt after the same
earlier ones, and the run then went its own way. With a replay file, a request asked
before gets the reply it got then, so a rerun differs from the last one only where
the code changed what the model is asked, and an unchanged prompt costs no CPU.

The key is the request as the model gets it (messages and tools, with call ids
numbered in order of appearance, since a server makes new ones each run) and the
options that shape a reply (model, temperature, reply cap). What is kept is the
client's turn before any reading of calls written as text: the reading runs on each
replay, so a change to it shows. A replayed call takes no time, so wall time is only
comparable between runs that replayed nothing; each run records how many it replayed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from meta_tools.llm.base import ChatModel
from meta_tools.llm.owned import close_model
from meta_tools.llm.types import AssistantTurn, ChatRequest

__all__ = ["MAX_REPLIES", "ReplayModel", "request_key"]

#: How many replies one file holds; past it, new replies are asked and not kept.
MAX_REPLIES = 50_000


def request_key(request: ChatRequest, options: Mapping[str, Any]) -> str:
    """A request's key: its messages, tools and `options`, call ids numbered in order."""
    dumped = request.model_dump(mode="json")
    ids: dict[str, str] = {}

    def numbered(call_id: str) -> str:
        return ids.setdefault(call_id, f"call_{len(ids)}")

    for message in dumped["messages"]:
        for call in message.get("tool_calls") or []:
            call["id"] = numbered(call["id"])
        if message.get("tool_call_id"):
            message["tool_call_id"] = numbered(message["tool_call_id"])
    body = json.dumps({"options": dict(options), "request": dumped}, sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


class ReplayModel:
    """A `ChatModel` that answers a request asked before with the reply kept in `path`,
    and asks `model` (appending its reply to `path`) otherwise.

    `stats` (file, replayed, asked) is updated in place: a run's record can hold it.
    """

    def __init__(self, model: ChatModel, path: Path, *, options: Mapping[str, Any]) -> None:
        self.model, self.path, self.options = model, path, dict(options)
        self.replies: dict[str, dict[str, Any]] = {}
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines()[:MAX_REPLIES]:
                kept = json.loads(line)
                self.replies[kept["key"]] = kept["reply"]
        self.stats: dict[str, Any] = {"file": path.name, "replayed": 0, "asked": 0}

    @property
    def inner(self) -> ChatModel:
        """The model asked when a request is new (`meta_tools.llm.wrapper.ModelWrapper`)."""
        return self.model

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        key = request_key(request, self.options)
        kept = self.replies.get(key)
        if kept is not None:
            self.stats["replayed"] += 1
            return AssistantTurn.model_validate(kept)
        turn = await self.model.complete(request)
        self.stats["asked"] += 1
        if len(self.replies) < MAX_REPLIES:
            reply = turn.model_dump(mode="json")
            self.replies[key] = reply
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps({"key": key, "reply": reply}, ensure_ascii=False) + "\n")
        return turn

    async def aclose(self) -> None:
        """Close the wrapped model, if it has anything to close."""
        await close_model(self.model)
