"""Built-in tools, each off unless the config's `builtins` section names it (see
`meta_tools.router.from_config.builtin_tools`).

- `execute_python_code`: a Python program in a fresh subprocess (timeout, output cap).
- `execute_shell_command`: one allow-listed program, no shell (timeout, output cap).
- `read_file` / `list_directory`: confined to the configured root folders.
"""

from __future__ import annotations

from .commands import ProcessLimits, ShellSettings, parse_command, python_tool, shell_tool
from .files import Confinement, list_directory_tool, read_file_tool
from .process import ProcessOutput, run_process

__all__ = [
    "Confinement",
    "ProcessLimits",
    "ProcessOutput",
    "ShellSettings",
    "list_directory_tool",
    "parse_command",
    "python_tool",
    "read_file_tool",
    "run_process",
    "shell_tool",
]
