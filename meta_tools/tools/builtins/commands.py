"""`execute_python_code` and `execute_shell_command`: code and commands in a bounded subprocess.

Neither is a sandbox: the child runs as the service's user. What they do
guarantee is a timeout, an output cap, an environment without the service's
variables (no API keys), and, for the shell, exactly one allow-listed program
run without a shell (no pipes, redirections, command lists or substitutions)
whose path arguments stay inside the file tools' roots.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Protocol

import anyio.to_thread
from typing_extensions import Doc

from ...exceptions import ToolArgumentsError, ToolDefinitionError
from ..function import FunctionTool
from .files import Confinement
from .process import ProcessOutput, minimal_env, run_process

__all__ = [
    "ProcessLimits",
    "ShellSettings",
    "confine_arguments",
    "parse_command",
    "python_tool",
    "shell_tool",
]


class ProcessLimits(Protocol):
    """How long a child process may run and how much of its output is kept."""

    @property
    def timeout_s(self) -> float: ...

    @property
    def max_output_chars(self) -> int: ...


class ShellSettings(ProcessLimits, Protocol):
    """The shell's limits and the programs it may run."""

    @property
    def allowed_commands(self) -> Sequence[str]: ...


_PUNCTUATION = "();<>|&"
_EXPANSION = re.compile(r"`|\$[A-Za-z_{(]")


def _make_folder() -> str:
    return tempfile.mkdtemp(prefix="meta-tools-py-")


def python_tool(settings: ProcessLimits) -> FunctionTool:
    """The `execute_python_code` tool: a fresh interpreter in a temporary folder per call."""

    async def execute_python_code(
        code: Annotated[str, Doc("A complete Python 3 program; print what you need to see.")],
    ) -> ProcessOutput:
        folder = await anyio.to_thread.run_sync(_make_folder)
        try:
            script = Path(folder) / "main.py"
            await anyio.to_thread.run_sync(script.write_text, code, "utf-8")
            env = minimal_env(HOME=folder, TMPDIR=folder, PYTHONIOENCODING="utf-8")
            return await run_process(
                [sys.executable, "-I", "-u", str(script)],
                tool="execute_python_code",
                cwd=folder,
                env=env,
                timeout_s=settings.timeout_s,
                max_output_chars=settings.max_output_chars,
            )
        finally:
            with anyio.CancelScope(shield=True):
                # A leftover temporary folder is not worth failing the call for.
                await anyio.to_thread.run_sync(
                    functools.partial(shutil.rmtree, folder, ignore_errors=True)
                )

    description = (
        "Run a Python 3 program in a new process and return its exit code, stdout and stderr. "
        f"Only printed output is seen. Limits: {settings.timeout_s:g} s, "
        f"{settings.max_output_chars} characters of output per stream; the working folder is "
        "an empty temporary folder, deleted afterwards."
    )
    return FunctionTool("execute_python_code", execute_python_code, description=description)


def parse_command(command: str, allowed: Sequence[str]) -> list[str]:
    """Split `command` like a POSIX shell would, and check it is one allowed program.

    Raises:
        ToolArgumentsError: empty, unparsable, a shell operator or expansion, or a
            program not on the allow-list (each message says what to do instead).
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    try:
        argv = list(lexer)
    except ValueError as exc:
        raise ToolArgumentsError(
            "execute_shell_command", [f"'command' cannot be parsed: {exc}"]
        ) from None
    problems: list[str] = []
    if not argv:
        problems.append("'command' is empty; give one command such as 'ls -l'")
    operators = [t for t in argv if t and all(ch in _PUNCTUATION for ch in t)]
    if operators:
        problems.append(
            f"'command' uses the shell operator {operators[0]!r}: pipes, redirections, "
            "command lists and subshells are not supported; run one command per call"
        )
    expansions = [t for t in argv if _EXPANSION.search(t)]
    if expansions:
        problems.append(
            f"'command' uses substitution or a variable in {expansions[0]!r}: nothing is "
            "expanded; write the values out"
        )
    if argv and not problems:
        program = argv[0]
        if "/" in program or "\\" in program:
            problems.append(f"'command': give the bare program name, not the path {program!r}")
        elif program not in allowed:
            problems.append(
                f"'command': {program!r} is not an allowed program; allowed: {', '.join(allowed)}"
            )
    if problems:
        raise ToolArgumentsError("execute_shell_command", problems)
    return argv


def confine_arguments(argv: Sequence[str], confinement: Confinement, cwd: Path) -> None:
    """Every argument that names a path (has a `/`, or names an entry of `cwd`, also after
    `--opt=` or a short option's letter) must resolve, symlinks followed, inside the roots.

    Raises:
        ToolArgumentsError: listing every argument that points outside.
    """
    problems: list[str] = []
    for arg in argv[1:]:
        candidates = {arg}
        if arg.startswith("-"):
            candidates |= {arg.split("=", 1)[1]} if "=" in arg else set()
            candidates |= {arg[2:]} if len(arg) > 2 and not arg.startswith("--") else set()
        for candidate in candidates:
            named = candidate and ("/" in candidate or candidate in (".", ".."))
            if not named and not (candidate and os.path.lexists(cwd / candidate)):
                continue
            target = os.path.realpath(cwd / candidate)
            if ".." in Path(candidate).parts or not confinement.inside(target):
                problems.append(
                    f"'command': the path {candidate!r} is outside the allowed folders"
                    f" {confinement.describe()}"
                )
                break
    if problems:
        raise ToolArgumentsError("execute_shell_command", problems)


def shell_tool(
    settings: ShellSettings, *, cwd: str | Path, roots: Sequence[Path] | None = None
) -> FunctionTool:
    """The `execute_shell_command` tool: one allow-listed program, run without a shell in `cwd`.

    Path arguments must stay inside `roots` (default: `cwd`), which is where the file
    tools are confined too; `cwd` must be one of them.
    """
    allowed = list(settings.allowed_commands)
    folder = str(cwd)
    confinement = Confinement("execute_shell_command", list(roots or [Path(cwd)]))
    if not confinement.inside(os.path.realpath(folder)):
        raise ToolDefinitionError(f"the shell's folder {folder!r} is outside its roots")

    async def execute_shell_command(
        command: Annotated[
            str, Doc("One command line, e.g. \"grep -n 'TODO' notes.txt\"; quotes work.")
        ],
    ) -> ProcessOutput:
        argv = parse_command(command, allowed)
        confine_arguments(argv, confinement, Path(folder))
        env = minimal_env()
        program = shutil.which(argv[0], path=env["PATH"])
        if program is None:
            raise ToolArgumentsError(
                "execute_shell_command", [f"'command': {argv[0]!r} is not installed here"]
            )
        return await run_process(
            [program, *argv[1:]],
            tool="execute_shell_command",
            cwd=folder,
            env=env,
            timeout_s=settings.timeout_s,
            max_output_chars=settings.max_output_chars,
        )

    description = (
        "Run one command and return its exit code, stdout and stderr. "
        f"Allowed programs: {', '.join(allowed)}. There is no shell: no pipes, redirections, "
        "';' or '&&', globs or $VARIABLES. Paths must stay inside "
        f"{confinement.describe()}. "
        f"Limits: {settings.timeout_s:g} s, {settings.max_output_chars} characters of output "
        "per stream."
    )
    return FunctionTool("execute_shell_command", execute_shell_command, description=description)
