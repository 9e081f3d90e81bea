"""Friday: a main agent that sees only the category tools of a config, in a few lines.

    python example.py                 # Meta_tool_config.json beside this file
    python example.py mine.json

The model is the config's `model` section; what it leaves out comes from the
environment (``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_MODEL``,
``META_TOOLS_TIMEOUT_S``). A local ``OPENAI_BASE_URL`` (Ollama, vLLM,
llama.cpp) needs no key. Friday and the categories use the same model.

`meta-tools chat -c FILE` does the same with each step shown and `--trace`;
`meta-tools demo` runs offline, without a model.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from meta_tools import MainAgent, MetaManager, MetaToolsError

CONFIG = Path(__file__).resolve().with_name("Meta_tool_config.json")


async def chat(config: Path) -> None:
    """Answer each line of input until `exit` or the end of input."""
    async with MetaManager.from_config(config) as meta:
        # The categories run on the model the config describes; Friday uses it too.
        friday = MainAgent(meta.model, meta)
        print(
            f"Friday's tools: {', '.join(m.slug for m in meta.categories)}. Type 'exit' to leave."
        )
        while True:
            try:
                # input() blocks: run it in a thread so the MCP sessions keep going.
                text = (await anyio.to_thread.run_sync(input, "you> ")).strip()
            except EOFError:
                return
            if text.lower() in ("exit", "quit"):
                return
            if text:
                print(f"Friday> {await friday.ask(text)}\n")


def main(argv: list[str]) -> int:
    config = Path(argv[0]) if argv else CONFIG
    try:
        anyio.run(chat, config)
    except MetaToolsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        print(
            "hint: `meta-tools validate` checks the config; `meta-tools demo` runs offline,"
            " without a model",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
