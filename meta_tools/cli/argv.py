"""The command line as typed: global options are accepted after the command too, as uv and ruff do."""

from __future__ import annotations

__all__ = ["hoist_global_options"]

_GLOBAL_FLAGS = ("--debug", "--version", "-V")
_GLOBAL_VALUED = ("--log-level",)


def hoist_global_options(args: list[str]) -> list[str]:
    """Move global options given after the command in front of it (`run X --debug`)."""
    command = None
    index = 0
    while index < len(args):
        arg = args[index]
        if arg in _GLOBAL_VALUED:
            index += 2
            continue
        if not arg.startswith("-"):
            command = index
            break
        index += 1
    if command is None:
        return args
    front, moved, rest = args[:command], [], []
    tail = args[command:]
    index = 0
    while index < len(tail):
        arg = tail[index]
        if arg == "--":
            rest += tail[index:]
            break
        if arg in _GLOBAL_FLAGS or arg.startswith(tuple(f"{o}=" for o in _GLOBAL_VALUED)):
            moved.append(arg)
        elif arg in _GLOBAL_VALUED and index + 1 < len(tail):
            moved += tail[index : index + 2]
            index += 1
        else:
            rest.append(arg)
        index += 1
    return front + moved + rest
