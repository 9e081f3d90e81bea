"""Global options after the command are moved in front of it, and nothing else is."""

import pytest

from meta_tools.cli.argv import hoist_global_options


@pytest.mark.parametrize(
    ("typed", "parsed"),
    [
        (["run", "x", "--debug"], ["--debug", "run", "x"]),
        (
            ["list", "--log-level", "info", "-c", "a.json"],
            ["--log-level", "info", "list", "-c", "a.json"],
        ),
        (["list", "--log-level=info"], ["--log-level=info", "list"]),
        (["--log-level", "debug", "list", "-V"], ["--log-level", "debug", "-V", "list"]),
        (["run", "x", "-o", "a", "--", "--debug"], ["run", "x", "-o", "a", "--", "--debug"]),
        (["--debug", "list"], ["--debug", "list"]),
        ([], []),
    ],
)
def test_global_options_move_in_front_of_the_command(typed: list[str], parsed: list[str]) -> None:
    assert hoist_global_options(typed) == parsed
