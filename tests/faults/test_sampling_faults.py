"""A legacy-era (2025-11-25) sampling run whose host dies or never answers ends: a disconnect
cancels it, a silent host fails it after the model's timeout."""

from __future__ import annotations

import signal
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import mcp_types
import pytest
from mcp import Client

from meta_tools import tool
from meta_tools.category.manager import CategoryManager
from meta_tools.config import ResumeConfig
from meta_tools.llm.base import ChatModel
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.llm.types import AssistantTurn, ChatRequest
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from tests.cli_process import Output

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]
SAMPLING_TOOLS = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())

CLIENT = """
import sys, anyio, mcp_types
from mcp import Client

async def sample(context, params):
    print("sampling", flush=True)
    await anyio.sleep_forever()

async def main():
    tools = mcp_types.SamplingCapability(tools=mcp_types.SamplingToolsCapability())
    async with Client(sys.argv[1], mode="legacy", sampling_callback=sample,
                      sampling_capabilities=tools) as client:
        print(await client.call_tool("text", {"objective": "shout", "exact_input": "hi"}), flush=True)

anyio.run(main)
"""


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


class Watched(SamplingChatModel):
    """The real sampling model, plus an event when a completion ends (however it ends)."""

    def __init__(self, *, timeout_s: float) -> None:
        super().__init__(timeout_s=timeout_s)
        self.ended = anyio.Event()
        self.outcome: BaseException | None = None

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        try:
            return await super().complete(request)
        except BaseException as exc:
            self.outcome = exc
            raise
        finally:
            self.ended.set()


def router(model: ChatModel) -> MetaManager:
    return MetaManager([CategoryManager("Text", "Shout texts.", [shout], model)])


async def test_a_legacy_client_killed_inside_its_sampling_callback_ends_its_run() -> None:
    watched = Watched(timeout_s=120)  # the disconnect, not the timeout
    async with anyio.create_task_group() as group:
        # A dropped stream is awaited for its resumption (serve.resume.grace_s): briefly here.
        resume = ResumeConfig(grace_s=0.5)
        serving = partial(serve, router(watched), transport="http", port=0, resume=resume)
        url = await group.start(serving)
        client = await anyio.open_process(
            [sys.executable, "-c", CLIENT, url], cwd=ROOT, stderr=None
        )
        try:
            assert client.stdout is not None
            with anyio.fail_after(30):
                await Output(client.stdout).wait_for("sampling")
            client.send_signal(signal.SIGKILL)
            with anyio.fail_after(15):
                await watched.ended.wait()
        finally:
            if client.returncode is None:
                client.kill()
            with anyio.CancelScope(shield=True):
                await client.wait()
            await client.aclose()
        group.cancel_scope.cancel()
    assert isinstance(watched.outcome, anyio.get_cancelled_exc_class())


async def test_a_legacy_host_that_never_answers_fails_the_run_after_the_model_timeout() -> None:
    async def never(context: Any, params: Any) -> Any:
        await anyio.sleep_forever()

    async with anyio.create_task_group() as group:
        meta = router(SamplingChatModel(timeout_s=1))
        url = await group.start(partial(serve, meta, transport="http", port=0))
        async with Client(
            url, mode="legacy", sampling_callback=never, sampling_capabilities=SAMPLING_TOOLS
        ) as client:
            with anyio.fail_after(30):
                answer = await client.call_tool("text", {"objective": "shout", "exact_input": "hi"})
        group.cancel_scope.cancel()
    assert answer.is_error is True
    assert answer.structured_content is not None
    assert answer.structured_content["status"] == "failed"
    assert "did not answer within 1 s" in answer.structured_content["summary"]
