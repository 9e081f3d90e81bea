"""`meta-tools serve` stops on SIGINT with status 130, also when started with SIGINT ignored."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from tests.cli_process import meta_tools_command
from tests.mcp.conftest import free_port

TOOLS = 'from meta_tools import tool\n\n\n@tool\ndef shout(text: str) -> str:\n    """Shout."""\n    return text.upper()\n'


def test_a_background_serve_started_with_sigint_ignored_still_ends_with_130(
    tmp_path: Path,
) -> None:
    """A shell's background job inherits SIGINT ignored; the server catches it and must not exit 0."""
    (tmp_path / "loud_tools.py").write_text(TOOLS)
    config = {"python_tools": ["loud_tools"], "Text": {"description": "Shout.", "tools": ["shout"]}}
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    command = [*meta_tools_command(), "serve", "--transport", "http", "--port", str(free_port())]
    process = subprocess.Popen(
        command,
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        assert process.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = process.stderr.readline()
            if "serving" in line or not line:
                break
        assert "serving" in line, line
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
