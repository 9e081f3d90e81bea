"""The soak benchmark's server process: `python -m benchmarks.soak_server CONFIG`.

Serves `MetaManager.from_config(CONFIG, model=<scripted>)` over streamable HTTP
on a free 127.0.0.1 port with `meta_tools.serve.serve`, prints one line
`listening on URL` once it accepts calls, and runs until SIGINT; on SIGUSR1 it
collects garbage and prints its live heap (`report_memory`). It is its own
process so that its resident memory is measured apart from the clients'.

The scripted model stands in for an LLM, deterministically: from the objective
it picks one demo tool (`soak_tasks.TASKS`) and puts the request's token (the
number in the exact input) into the tool's arguments; once the tool answered, it
writes a summary from the tool's own output. So a result whose arguments, tool output
and summary all carry the caller's token was run for that caller.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import signal
import sys
from functools import partial
from typing import Any

import anyio

from meta_tools.category.fence import read_result
from meta_tools.category.task import read_task
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve

from .soak_tasks import TASKS

__all__ = ["answer", "main", "report_memory", "scripted_model"]

_BY_OBJECTIVE = {task.objective: task for task in TASKS}
_INPUT = re.compile(r"^token (?P<token>\d+)$")


def _summary(tool: str, output: dict[str, Any], arguments: dict[str, Any]) -> str:
    """Written from the tool's answer (not the request), so a crossed answer would show."""
    if tool == "calculate":
        return f"{output['expression']} = {output['result']}"
    if tool == "search_text":
        first = output["matches"][0]
        return f"found {first['match']} at line {first['line']}, column {first['column']}"
    return f"{output['start']} + {arguments['days']} days = {output['result']}"


def answer(request: ChatRequest) -> AssistantTurn:
    """The scripted LLM: pick the task's tool first, then summarise the tool's output.

    Anything unexpected (an objective it does not know, a failed tool) is answered
    with a text saying so, which the client counts as a wrong result.
    """
    read = read_task(request.messages[1].content) if len(request.messages) > 1 else None
    asked = _INPUT.match(read[1]) if read is not None else None
    if read is None or asked is None:
        return AssistantTurn(text="unexpected request")
    task = _BY_OBJECTIVE.get(read[0])
    if task is None:
        return AssistantTurn(text=f"unknown objective {asked['objective']!r}")
    results = [m for m in request.messages if m.role == "tool"]
    if not results:
        arguments = task.arguments(int(asked["token"]))
        return AssistantTurn(tool_calls=[ToolCall(name=task.tool, arguments=arguments)])
    last = results[-1]
    fenced = read_result(last.content)
    if fenced is None or not fenced.ok:
        return AssistantTurn(text=f"the tool failed: {last.content[:300]}")
    calls = [c for m in request.messages for c in m.tool_calls if c.id == last.tool_call_id]
    sent = calls[0].arguments if calls and isinstance(calls[0].arguments, dict) else {}
    return AssistantTurn(text=_summary(task.tool, json.loads(fenced.text), sent))


def scripted_model() -> ScriptedModel:
    """`answer` as a ScriptedModel that keeps no request history (a real client keeps none)."""

    def respond(request: ChatRequest) -> AssistantTurn:
        model.requests.clear()  # ScriptedModel records every request: 10,000 calls would pile up
        return answer(request)

    model = ScriptedModel.from_function(respond)
    return model


async def report_memory() -> None:
    """On each SIGUSR1: a full garbage collection, then one line `memory {JSON}` on stdout.

    The JSON has the live heap (`allocated_blocks`, `objects`), which unlike RSS does
    not keep the high-water mark of calls that were in flight earlier.
    """
    with anyio.open_signal_receiver(signal.SIGUSR1) as signals:
        async for _ in signals:
            gc.collect()
            heap = {"allocated_blocks": sys.getallocatedblocks(), "objects": len(gc.get_objects())}
            print(f"memory {json.dumps(heap)}", flush=True)


async def main(config: str) -> None:
    """Serve the router of `config` until SIGINT, printing `listening on URL` once it is up."""
    meta = MetaManager.from_config(config, model=scripted_model())
    async with anyio.create_task_group() as group:
        group.start_soon(report_memory)
        async with anyio.create_task_group() as serving:
            url = await serving.start(partial(serve, meta, transport="http", port=0))
            print(f"listening on {url}", flush=True)
        group.cancel_scope.cancel()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn re-raises the SIGINT it stopped on
        anyio.run(main, sys.argv[1])
