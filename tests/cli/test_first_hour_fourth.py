"""A new user's first hour, fourth pass (issue 57): a file of tools the config does not load.

Each runs the real `meta-tools` command, with no key.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_app import CATEGORIES, TOOLS_MODULE
from tests.cli.test_first_hour import cli, write

TIPS = '''"""Money helpers."""

from meta_tools import tool

open("ran.txt", "w").write("imported")  # a script: reading it for a hint must not run it


@tool
def tip_amount(bill: float, percent: float) -> float:
    """The tip on a bill."""
    return round(bill * percent / 100, 2)


@tool("split_bill")
def split(bill: float, people: int) -> float:
    """Each person's share."""
    return round(bill / people, 2)
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "cli_sample_tools.py").write_text(TOOLS_MODULE)
    (tmp_path / "tips.py").write_text(TIPS)
    return tmp_path


def money(*tools: str) -> dict[str, object]:
    return {"Money": {"description": "Tips and bills.", "tools": list(tools)}}


def test_validate_names_the_unloaded_file_that_defines_a_listed_tool_and_the_line_to_add(
    folder: Path,
) -> None:
    write(folder, money("tip_amount"))
    done = cli(folder, "validate")
    assert (done.returncode, done.stdout) == (1, "")
    assert (
        "  - $.\"Money\".tools[0]: tool 'tip_amount' is listed but no source provides it;"
        " tips.py beside the config defines @tool 'tip_amount' but is not loaded: add"
        ' "python_tools": ["tips.py"] to the config (or pass -t tips.py to the command)\n'
    ) in done.stderr
    assert not (folder / "ran.txt").exists()


def test_the_line_to_add_keeps_the_python_tools_already_listed(folder: Path) -> None:
    write(folder, {"python_tools": ["cli_sample_tools.py"], **CATEGORIES, **money("split_bill")})
    done = cli(folder, "validate")
    assert done.returncode == 1
    assert (
        "tips.py beside the config defines @tool 'split_bill' but is not loaded: add"
        ' "python_tools": ["cli_sample_tools.py", "tips.py"] to the config'
    ) in done.stderr


def test_a_close_name_in_an_unloaded_file_is_named_with_the_name_to_list(folder: Path) -> None:
    config = write(folder, money("tip_amt"))
    done = cli(folder, "validate", "-c", str(config))
    assert done.returncode == 1
    assert (
        f"tips.py beside the config defines @tool 'tip_amount' but is not loaded: add"
        f' "python_tools": ["tips.py"] to the config (or pass -t {folder / "tips.py"} to the'
        " command); then list 'tip_amount', not 'tip_amt'\n"
    ) in done.stderr


def test_the_fix_it_gives_works(folder: Path) -> None:
    write(folder, {"python_tools": ["tips.py"], **money("tip_amount", "split_bill")})
    assert cli(folder, "validate").returncode == 0
    write(folder, money("tip_amount", "split_bill"))
    assert cli(folder, "validate", "-t", "tips.py").returncode == 0


def test_no_file_is_named_when_none_defines_the_tool_or_a_close_one(folder: Path) -> None:
    write(folder, money("convert_currency"))
    done = cli(folder, "validate")
    assert done.returncode == 1
    assert "tool 'convert_currency' is listed but no source provides it\n" in done.stderr
    assert "beside the config" not in done.stderr


def test_a_misspelt_prompts_dir_says_the_path_it_resolved_to_and_the_folder_meant(
    folder: Path,
) -> None:
    (folder / "my_prompts").mkdir()
    write(folder, {"prompts_dir": "my_promts", "python_tools": ["tips.py"], **money("tip_amount")})
    done = cli(folder, "validate")
    assert done.returncode == 1
    assert (
        f"  - prompts_dir: the folder {str(folder / 'my_promts')!r} does not exist;"
        " did you mean 'my_prompts' (a folder beside it)?\n"
    ) in done.stderr


def test_a_prompts_dir_like_no_folder_says_only_the_path_it_resolved_to(folder: Path) -> None:
    write(
        folder,
        {"prompts_dir": "templates/mine", "python_tools": ["tips.py"], **money("tip_amount")},
    )
    done = cli(folder, "validate")
    assert done.returncode == 1
    missing = folder / "templates" / "mine"
    assert f"  - prompts_dir: the folder {str(missing)!r} does not exist\n" in done.stderr
