"""Running the real `meta-tools` command in a subprocess and reading its output."""

import sys
from pathlib import Path

import anyio
from anyio.abc import ByteReceiveStream


def meta_tools_command() -> list[str]:
    """The installed `meta-tools` script beside this interpreter, else `python -m meta_tools.cli`."""
    script = Path(sys.executable).with_name("meta-tools")
    return [str(script)] if script.exists() else [sys.executable, "-m", "meta_tools.cli"]


class Output:
    """A subprocess stream read line by line; `wait_for` waits (bounded) for a line."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self.stream = stream
        self.text = ""
        self._seen = 0

    async def wait_for(self, needle: str, *, timeout: float = 30.0) -> str:
        """The next whole line containing `needle`; earlier lines are passed over (kept in text)."""
        with anyio.fail_after(timeout):
            while True:
                lines = self.text[self._seen :].splitlines(keepends=True)
                for line in lines:
                    if not line.endswith("\n"):
                        break
                    self._seen += len(line)
                    if needle in line:
                        return line
                self.text += (await self.stream.receive()).decode(errors="replace")
