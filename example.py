"""Friday: a main agent that sees only the category tools of `Meta_tool_config.json`.

    python example.py            # chat, with a key (below); the offline demo without one
    python example.py --demo     # the offline demo even when a key is set
    python example.py --trace trace.jsonl

The model comes from environment variables:

- ``OPENAI_API_KEY`` (+ ``OPENAI_BASE_URL``, ``OPENAI_MODEL``): any OpenAI-compatible endpoint
  (OpenAI, vLLM, Ollama, llama.cpp, DeepSeek, DashScope's compatible mode); an
  ``OPENAI_BASE_URL`` on this machine needs no key;
- ``DASHSCOPE_API_KEY`` (+ ``DASHSCOPE_MODEL``): Qwen through DashScope;
- ``META_TOOLS_TIMEOUT_S``: seconds per model request (default 60; a local model
  on a CPU may need a few minutes).

Friday and the category managers use the same model. Friday's tools are the
few category tools; each call runs a category's own loop over the concrete
tools of the demo MCP server (started as a subprocess by the config).
"""

from __future__ import annotations

import argparse
import os
import sys
from functools import partial
from pathlib import Path

import anyio
import anyio.from_thread
from rich.console import Console

from meta_tools import (
    ChatModel,
    MainAgent,
    MetaManager,
    MetaToolsError,
    ModelError,
    Tracer,
)
from meta_tools.cli.console import AgentStepPrinter
from meta_tools.cli.offline_demo import run_demo
from meta_tools.config import ModelConfig
from meta_tools.llm.keys import is_local_url
from meta_tools.router.from_config import model_from_config, with_environment

CONFIG = Path(__file__).resolve().with_name("Meta_tool_config.json")


def model_from_env() -> tuple[ChatModel, str] | None:
    """The model the environment has a key for, and a line describing it; None without a key.

    An ``OPENAI_BASE_URL`` on this machine (Ollama, vLLM, llama.cpp) needs no key.
    """
    if os.environ.get("OPENAI_API_KEY") or is_local_url(os.environ.get("OPENAI_BASE_URL")):
        config = with_environment(ModelConfig())
        where = f" at {config.base_url}" if config.base_url else ""
        described = f"OpenAI-compatible model {config.name!r}{where}"
    elif os.environ.get("DASHSCOPE_API_KEY"):
        name = os.environ.get("DASHSCOPE_MODEL") or "qwen-plus"
        config = ModelConfig(provider="dashscope", name=name)
        described = f"DashScope model {name!r}"
    else:
        return None
    return model_from_config(config), f"{described} (timeout {config.timeout_s:g} s)"


def chat(console: Console, model: ChatModel, config: Path, trace: Path | None) -> None:
    """Talk to Friday until `exit` (or Ctrl-D / Ctrl-C).

    The router lives in an event loop on a background thread (a blocking
    portal), so this thread can wait on `input()` without blocking it.
    """
    meta = MetaManager.from_config(config, model=model)
    tracer = meta.tracer = Tracer(jsonl=trace) if trace else None
    printer = AgentStepPrinter(console)
    with (
        anyio.from_thread.start_blocking_portal() as portal,
        portal.wrap_async_context_manager(meta),
    ):
        friday = MainAgent(model, meta)
        names = ", ".join(m.slug for m in meta.categories)
        console.print(f"[dim]Friday's tools: {names}. Type 'exit' to leave.[/]")
        while True:
            try:
                text = console.input("[bold green]you>[/] ").strip()
            except (EOFError, KeyboardInterrupt):
                break
            if text.lower() in ("exit", "quit"):
                break
            if not text:
                continue
            try:
                answer = portal.call(partial(friday.ask, text, on_step=printer))
            except ModelError as exc:
                console.print(f"[red]The model failed:[/] {exc}")
                continue
            console.print(f"[bold cyan]Friday>[/] {answer}\n", markup=True)
        if tracer is not None:
            portal.call(tracer.aclose)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--demo", action="store_true", help="run the offline demo")
    parser.add_argument("--config", type=Path, default=CONFIG, help="the config file")
    parser.add_argument("--trace", type=Path, help="append a JSON-lines trace to this file")
    args = parser.parse_args(argv)
    console = Console(highlight=False)
    chosen = None if args.demo else model_from_env()
    try:
        if chosen is None:
            if not args.demo:
                console.print(
                    "[yellow]No OPENAI_API_KEY or DASHSCOPE_API_KEY is set[/] (nor an"
                    " OPENAI_BASE_URL on this machine, which needs no key), so here is the"
                    " offline demo instead: a scripted conversation through the real router."
                )
            config = args.config if args.config.exists() else None  # None: the packaged copy
            anyio.run(lambda: run_demo(console, config=config, trace=args.trace))
        else:
            model, described = chosen
            console.print(f"[dim]Friday and the categories use the {described}.[/]")
            chat(console, model, args.config, args.trace)
    except MetaToolsError as exc:
        console.print(f"[red]error:[/] {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
