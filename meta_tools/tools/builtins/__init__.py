"""Built-in tools, each off unless the config's `builtins` section names it.

- `execute_python_code`: a Python program in a fresh subprocess (timeout, output cap).
- `execute_shell_command`: one allow-listed program, no shell (timeout, output cap).
- `read_file` / `list_directory`: confined to the configured root folders.
"""

from __future__ import annotations

from pathlib import Path

from ...config import FileBuiltinConfig, MetaToolsConfig
from ...exceptions import ConfigError
from ..base import BaseTool
from .commands import parse_command, python_tool, shell_tool
from .files import Confinement, list_directory_tool, read_file_tool
from .process import ProcessOutput, run_process

__all__ = [
    "Confinement",
    "ProcessOutput",
    "builtin_tools",
    "list_directory_tool",
    "parse_command",
    "python_tool",
    "read_file_tool",
    "run_process",
    "shell_tool",
]


def _roots(
    config: MetaToolsConfig, name: str, settings: FileBuiltinConfig, problems: list[str]
) -> list[Path]:
    """The roots of a file tool, relative to the config file; each must be a folder."""
    roots: list[Path] = []
    for index, root in enumerate(settings.roots):
        folder = (Path(config.base_dir) / root).resolve()
        if not folder.is_dir():
            problems.append(f"$.builtins.{name}.roots[{index}]: {root!r} is not an existing folder")
        roots.append(folder)
    return roots


def builtin_tools(config: MetaToolsConfig) -> list[BaseTool]:
    """The built-ins the config enables, configured; none when the section is empty.

    The shell runs in the config file's folder; file tools resolve relative
    roots against it too.

    Raises:
        ConfigError: a file tool's root is not an existing folder (every one is listed).
    """
    section = config.builtins
    tools: list[BaseTool] = []
    problems: list[str] = []
    if section.execute_python_code is not None:
        tools.append(python_tool(section.execute_python_code))
    if section.execute_shell_command is not None:
        # The shell's paths are confined where the file tools are (else to the config's folder).
        files = [f for f in (section.read_file, section.list_directory) if f is not None]
        shell_roots = list(
            dict.fromkeys((Path(config.base_dir) / r).resolve() for f in files for r in f.roots)
        ) or [Path(config.base_dir).resolve()]
        tools.append(
            shell_tool(section.execute_shell_command, cwd=shell_roots[0], roots=shell_roots)
        )
    if section.read_file is not None:
        roots = _roots(config, "read_file", section.read_file, problems)
        tools.append(read_file_tool(roots, max_bytes=section.read_file.max_bytes))
    if section.list_directory is not None:
        roots = _roots(config, "list_directory", section.list_directory, problems)
        tools.append(list_directory_tool(roots))
    if problems:
        raise ConfigError(config.source, problems)
    return tools
