"""Every text that leaves the router is valid UTF-8: undecodable bytes in file names,
process output or LLM arguments become U+FFFD."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path

import anyio
import pytest
from mcp import Client

from meta_tools.category.manager import CategoryManager
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve
from meta_tools.tools.builtins.files import list_directory_tool
from meta_tools.tracing import JsonlTrace

pytestmark = pytest.mark.anyio


def folder_with_a_bad_name(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "plain.txt").write_text("x")
    with open(os.path.join(os.fsencode(folder), b"report-\xff.txt"), "wb") as handle:
        handle.write(b"y")
    return folder


def lister(folder: Path) -> tuple[ScriptedModel, CategoryManager]:
    def answer(request: ChatRequest) -> AssistantTurn:
        if len(request.messages) > 2:
            return AssistantTurn(text="listed report-\udcff.txt")
        return AssistantTurn(
            tool_calls=[
                ToolCall(name="list_directory", arguments={"path": str(folder)}),
                # a lone surrogate from a JSON "\ud800" escape in the LLM's arguments
                ToolCall(name="list_directory", arguments={"path": "\ud800"}),
            ]
        )

    model = ScriptedModel.from_function(answer)
    category = CategoryManager("Files", "List folders.", [list_directory_tool([folder])], model)
    return model, category


async def test_an_undecodable_file_name_reaches_the_llm_and_the_result_as_valid_utf8(
    tmp_path: Path,
) -> None:
    folder = folder_with_a_bad_name(tmp_path)
    model, category = lister(folder)
    result = await category.run("list the folder", str(folder))
    text = result.to_json()
    text.encode("utf-8")  # valid
    decoded = json.loads(text)
    assert "report-\ufffd.txt" in decoded["executions"][0]["result"]
    assert decoded["executions"][1]["arguments"] == {"path": "\ufffd"}
    assert decoded["summary"] == "listed report-\ufffd.txt"
    for message in model.requests[1].messages:
        message.content.encode("utf-8")
    (listing, _) = [m.content for m in model.requests[1].messages if m.role == "tool"]
    assert "report-\ufffd.txt" in listing


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_served_call_listing_an_undecodable_name_answers_valid_json(
    tmp_path: Path, mode: str
) -> None:
    folder = folder_with_a_bad_name(tmp_path)
    _, category = lister(folder)
    async with anyio.create_task_group() as group:
        url = await group.start(partial(serve, MetaManager([category]), transport="http", port=0))
        async with Client(url, mode=mode) as client:
            answer = await client.call_tool("files", {"objective": "list", "exact_input": "it"})
            again = await client.call_tool("files", {"objective": "list", "exact_input": "it"})
        group.cancel_scope.cancel()
    for reply in (answer, again):
        assert reply.is_error is False
        assert reply.structured_content is not None
        assert "report-\ufffd.txt" in reply.structured_content["executions"][0]["result"]


async def test_a_trace_of_a_reply_with_a_lone_surrogate_is_written_as_valid_utf8(
    tmp_path: Path,
) -> None:
    trace = JsonlTrace(tmp_path / "t.jsonl")
    await trace.write({"reply": {"text": "the model said \ud800"}, "file": "report-\udcff.txt"})
    await trace.aclose()
    record = json.loads((tmp_path / "t.jsonl").read_bytes().decode("utf-8"))
    assert (record["reply"]["text"], record["file"]) == (
        "the model said \ufffd",
        "report-\ufffd.txt",
    )
