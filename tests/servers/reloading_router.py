"""The router served over stdio with its config watched, for the tests:
`python -m tests.servers.reloading_router CONFIG.json`.

The watcher is live before the first request is answered, so an edit made after
`initialize` is always applied (and announced). Its categories use the host's
model (sampling) and may list `shout`, a Python tool.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

from meta_tools.llm.sampling import SamplingChatModel
from meta_tools.router.manager import MetaManager
from meta_tools.router.reload import ConfigReloader
from meta_tools.serve.server import serve
from tests.servers.router import shout


async def main(path: str) -> None:
    meta = MetaManager.from_config(path, tools=[shout], model=SamplingChatModel())
    async with meta, anyio.create_task_group() as group:
        await group.start(ConfigReloader(meta, Path(path)).run)
        await serve(meta, transport="stdio")
        group.cancel_scope.cancel()  # stdin closed: stop watching too


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
