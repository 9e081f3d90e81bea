"""The router served over stdio, for the tests: `python -m tests.servers.router CONFIG.json`.

Its categories use the host's model (sampling) and may list `shout`, a Python tool.
"""

from __future__ import annotations

import sys

import anyio

from meta_tools import tool
from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.serve.server import serve


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


async def main(path: str) -> None:
    meta = MetaManager.from_config(path, tools=[shout], model=SamplingChatModel())
    await serve(meta, transport="stdio")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
