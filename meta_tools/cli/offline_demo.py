"""The offline demo (`meta-tools demo`).

Friday (a `MainAgent`) talks through a fixed conversation. Only the LLM
decisions are scripted, Friday's and the category managers'; everything else
is real: the router, the demo MCP server as a subprocess, and the tool
results, which the scripted summaries quote. The script names tools, not
categories, so it runs on any config that groups the demo server's tools.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from ..agent import MainAgent
from ..category.fence import read_result
from ..category.task import read_task
from ..config import MetaToolsConfig
from ..demo.categories import CATEGORIES
from ..exceptions import MetaToolsError
from ..llm.scripted import ScriptedModel
from ..llm.types import REQUEST_INPUT, AssistantTurn, ChatRequest, ToolCall, Usage
from ..router.manager import MetaManager
from ..support.json_text import loads
from ..tracing import Tracer
from .checks import measure
from .console import AgentStepPrinter, print_saving
from .terminal import shown
from .tokens import load_counter

__all__ = ["DEMO", "demo_config", "run_demo"]

Results = dict[str, Any]
"""Tool name -> the tool's (parsed) result in the current category run."""


@dataclass(frozen=True)
class Task:
    """One category call Friday makes, and how its scripted category manager works it."""

    tool: str  # the demo tool whose category Friday calls
    objective: str
    exact_input: str
    rounds: tuple[tuple[tuple[str, dict[str, Any]], ...], ...] = ()
    summary: Callable[[Results], str] = lambda _: ""
    ask: tuple[list[str], str] | None = None  # request_input instead of tools


@dataclass(frozen=True)
class Question:
    """One user message, the category calls it leads to, and Friday's answer to their results."""

    text: str
    tasks: tuple[Task, ...]
    answer: Callable[[list[dict[str, Any]]], str]


def _fmt(value: Any, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


SENTENCE = "The quick brown fox jumps over the lazy dog. The dog sleeps."

DEMO: tuple[Question, ...] = (
    Question(
        "A marathon is 42.195 km. How many miles is that, and what pace per km do I need"
        " to finish in 3 h 30 min?",
        (
            Task(
                "convert_units",
                "Convert 42.195 km to miles, and compute the pace in minutes per km for 210 minutes",
                "distance: 42.195 km; target time: 210 minutes",
                rounds=(
                    (
                        ("convert_units", {"value": 42.195, "from_unit": "km", "to_unit": "mi"}),
                        ("calculate", {"expression": "210 / 42,195"}),  # a slip, fixed next round
                    ),
                    (("calculate", {"expression": "210 / 42.195"}),),
                ),
                summary=lambda r: (
                    f"42.195 km = {_fmt(r['convert_units']['result'])} mi; pace ="
                    f" {_fmt(r['calculate']['result'])} min/km (210 / 42.195)."
                ),
            ),
        ),
        lambda results: f"That is {results[0]['summary']}",
    ),
    Question(
        "My flight lands on 2025-03-30 at 14:30 Paris time. What time is that in Tokyo, and"
        " what weekday is Christmas 2025?",
        (
            Task(
                "convert_time_zone",
                "Convert a Paris time to Tokyo time, and find the weekday of 2025-12-25",
                "time: 2025-03-30 14:30, from Europe/Paris to Asia/Tokyo; date: 2025-12-25",
                rounds=(
                    (
                        (
                            "convert_time_zone",
                            {
                                "time": "2025-03-30 14:30",
                                "from_zone": "Europe/Paris",
                                "to_zone": "Asia/Tokyo",
                            },
                        ),
                        ("describe_date", {"date": "2025-12-25"}),
                    ),
                ),
                summary=lambda r: (
                    f"14:30 in Paris is {r['convert_time_zone']['to']['datetime']}"
                    f" ({r['convert_time_zone']['to']['abbreviation']}) in Tokyo;"
                    f" 2025-12-25 is a {r['describe_date']['weekday']}."
                ),
            ),
        ),
        lambda results: results[0]["summary"],
    ),
    Question(
        f"Count the words in '{SENTENCE}' and convert 100 °F to Celsius.",
        (
            Task(
                "text_statistics",
                "Count the words and sentences of a text",
                SENTENCE,
                rounds=((("text_statistics", {"text": SENTENCE}),),),
                summary=lambda r: (
                    f"{r['text_statistics']['words']} words in"
                    f" {r['text_statistics']['sentences']} sentences; most frequent:"
                    f" {r['text_statistics']['top_words'][0]['word']!r}."
                ),
            ),
            Task(
                "convert_units",
                "Convert 100 degrees Fahrenheit to Celsius",
                "100 F to C",
                rounds=((("convert_units", {"value": 100, "from_unit": "F", "to_unit": "C"}),),),
                summary=lambda r: f"100 °F = {_fmt(r['convert_units']['result'])} °C.",
            ),
        ),
        lambda results: " ".join(r["summary"] for r in results),
    ),
    Question(
        "Convert 100 to kilograms.",
        (
            Task(
                "convert_units",
                "Convert 100 to kilograms",
                "100",
                ask=(["the unit of 100"], "100 what: pounds, grams, ounces?"),
            ),
        ),
        lambda results: f"I need one more detail: {results[0].get('question', '')}",
    ),
)


def demo_config() -> MetaToolsConfig:
    """The demo's config: the demo's `CATEGORIES` over the demo MCP server (its files: the cwd)."""
    server = {"transport": "stdio", "command": "python", "args": ["-m", "meta_tools.demo"]}
    data = {"mcp_servers": {"demo": server}, **CATEGORIES}
    return MetaToolsConfig.from_data(data, source="<demo config>")


def _matches(name: str, tool: str) -> bool:
    """A tool's name in the router (maybe with a server prefix) against the script's name."""
    return name == tool or name.endswith(f"_{tool}")


def _parse_result(text: str) -> Any:
    try:
        return loads(text)
    except ValueError:
        return text


def _category_reply(content: str) -> dict[str, Any]:
    """A category result as Friday received it (JSON), or an error text as a summary."""
    try:
        parsed = loads(content)
    except ValueError:
        return {"status": "failed", "summary": content}
    return parsed if isinstance(parsed, dict) else {"status": "failed", "summary": content}


def _with_usage(decide: Callable[[ChatRequest], AssistantTurn]) -> ScriptedModel:
    """A scripted model whose turns report the tokens of the real prompt and of the reply."""
    counter = load_counter()

    def answer(request: ChatRequest) -> AssistantTurn:
        turn = decide(request)
        reply = turn.text or json.dumps([[c.name, c.arguments] for c in turn.tool_calls])
        usage = Usage(
            prompt_tokens=counter.count_request(request), completion_tokens=counter.count(reply)
        )
        return turn.model_copy(update={"usage": usage})

    return ScriptedModel.from_function(answer)


def category_model(questions: Sequence[Question]) -> ScriptedModel:
    """The category managers' script: each task's rounds of tool calls, then its summary."""
    tasks = {task.objective: task for question in questions for task in question.tasks}

    def decide(request: ChatRequest) -> AssistantTurn:
        first_user = next(m.content for m in request.messages if m.role == "user")
        objective, _ = read_task(first_user) or ("", "")
        task = tasks[objective]
        if task.ask is not None:
            missing, question = task.ask
            call = ToolCall(
                name=REQUEST_INPUT, arguments={"missing": missing, "question": question}
            )
            return AssistantTurn(tool_calls=[call])
        done = sum(1 for m in request.messages if m.role == "assistant")
        if done < len(task.rounds) and request.tools:
            offered = [t.name for t in request.tools]
            calls = [
                ToolCall(name=next(n for n in offered if _matches(n, tool)), arguments=arguments)
                for tool, arguments in task.rounds[done]
            ]
            return AssistantTurn(tool_calls=calls)
        names = {tool for calls in task.rounds for tool, _ in calls}
        results: Results = {}
        for message in request.messages:
            fenced = read_result(message.content) if message.role == "tool" else None
            if fenced is not None and fenced.ok:
                tool = next(t for t in names if _matches(message.name or "", t))
                results[tool] = _parse_result(fenced.text)  # a later retry wins
        return AssistantTurn(text=task.summary(results))

    return _with_usage(decide)


def friday_model(questions: Sequence[Question], meta: MetaManager) -> ScriptedModel:
    """Friday's script: call the categories of each question's tasks, then answer from results."""
    by_text = {question.text: question for question in questions}

    def category_of(tool: str) -> str:
        for manager in meta.categories:
            if any(_matches(t.name, tool) for t in manager.tools.list_tools()):
                return manager.slug
        raise LookupError(f"the demo needs a category with the tool {tool!r}; check the config")

    def decide(request: ChatRequest) -> AssistantTurn:
        # The user's last question (notes from the agent loop are user messages too).
        last_user = max(
            i for i, m in enumerate(request.messages) if m.role == "user" and m.content in by_text
        )
        question = by_text[request.messages[last_user].content]
        replies = [m for m in request.messages[last_user:] if m.role == "tool"]
        if not replies:
            calls = [
                ToolCall(
                    name=category_of(task.tool),
                    arguments={"objective": task.objective, "exact_input": task.exact_input},
                )
                for task in question.tasks
            ]
            return AssistantTurn(tool_calls=calls)
        return AssistantTurn(text=question.answer([_category_reply(m.content) for m in replies]))

    return _with_usage(decide)


def _missing_tools(meta: MetaManager, questions: Sequence[Question]) -> list[str]:
    """The demo tools the script calls that no category of `meta` offers."""
    offered = [t.name for m in meta.categories for t in m.tools.list_tools()]
    needed = {t for q in questions for task in q.tasks for calls in task.rounds for t, _ in calls}
    needed |= {task.tool for q in questions for task in q.tasks}
    return sorted(t for t in needed if not any(_matches(n, t) for n in offered))


async def run_demo(
    console: Console,
    *,
    config: MetaToolsConfig | Path | None = None,
    trace: Path | None = None,
    questions: Sequence[Question] = DEMO,
) -> None:
    """Run the scripted conversation end to end and print every step.

    Args:
        console: where to print.
        config: a config grouping the demo server's tools (default: `demo_config()`).
        trace: a file to append the JSON-lines trace to.
        questions: the conversation.

    Raises:
        ConfigError: the config is invalid.
        MetaToolsError: no category offers a tool the script calls (before anything is asked).
    """
    loaded = demo_config() if config is None else config
    meta = MetaManager.from_config(loaded, model=category_model(questions))
    tracer = meta.tracer = Tracer(jsonl=trace) if trace else None
    printer = AgentStepPrinter(console)
    try:
        async with meta:
            if missing := _missing_tools(meta, questions):
                source = loaded.source if isinstance(loaded, MetaToolsConfig) else str(loaded)
                raise MetaToolsError(
                    f"{source} cannot run the demo: no category has the demo server's"
                    f" tool{'s' if len(missing) != 1 else ''} {', '.join(map(repr, missing))};"
                    " run `meta-tools demo` without -c, or `meta-tools init` for a config that"
                    " groups them"
                )
            friday = MainAgent(friday_model(questions, meta), meta)
            tools = sum(len(m.tools) for m in meta.categories)
            console.print(
                f"[dim]Friday sees {len(meta.categories)} category tools in front of {tools}"
                " tools of the demo MCP server. The LLM decisions are scripted; the router,"
                " the MCP server and every tool result are real, and token counts are"
                " measured on the real prompts.[/]\n"
            )
            for question in questions:
                console.print(f"[bold green]you>[/] {shown(question.text)}", soft_wrap=True)
                answer = await friday.ask(question.text, on_step=printer)
                console.print(f"[bold cyan]Friday>[/] {shown(answer)}\n", soft_wrap=True)
            saving = measure(meta)
    finally:
        if tracer is not None:
            await tracer.aclose()
    calls = sum(len(q.tasks) for q in questions)
    console.print(
        f"[green]Demo finished:[/] {len(questions)} questions, {calls} category calls,"
        f" {printer.tool_calls} tool calls through the real router and MCP server."
        + (f" Trace: {shown(trace)}" if trace else ""),
        soft_wrap=True,
    )
    print_saving(console, saving, agent="Friday")
