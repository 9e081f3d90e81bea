"""The files `init` and `group --write` write: never through a symbolic link (run as the command)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from meta_tools.cli.files import WriteRefusedError, make_folder, write_file
from meta_tools.cli.init import PROMPTS_DIR
from meta_tools.config import MetaToolsConfig
from tests.cli_process import meta_tools_command

REPO = Path(__file__).parents[2]
CONFIG = "Meta_tool_config.json"
LINK_HINT = (
    "nothing is written through a link: pass --force to replace the link itself (its target"
    " is left alone)"
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links and FIFOs")


def meta_tools(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*meta_tools_command(), *args],
        capture_output=True,
        text=True,
        cwd=folder,
        env={**os.environ, "COLUMNS": "400", "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the working folder, holding a file that must never be written."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "victim.txt").write_text("keep me")
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


# -- init -----------------------------------------------------------------------------------


@posix_only
def test_init_refuses_a_link_that_points_nowhere_and_writes_nothing(
    work: Path, outside: Path
) -> None:
    planted = outside / "planted.json"
    (work / CONFIG).symlink_to(planted)
    done = meta_tools(work, "init")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {CONFIG!r} is a symbolic link to {str(planted)!r}; nothing was written: pass"
        " --force to overwrite (a symbolic link is replaced, never written through)\n"
    )
    assert not planted.exists()
    assert (work / CONFIG).is_symlink()
    assert sorted(p.name for p in work.iterdir()) == [CONFIG]


@posix_only
def test_init_force_replaces_the_link_itself_and_never_writes_its_target(
    work: Path, outside: Path
) -> None:
    victim = outside / "victim.txt"
    (work / CONFIG).symlink_to(victim)
    done = meta_tools(work, "init", "--force")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "keep me"
    assert not (work / CONFIG).is_symlink()
    MetaToolsConfig.load(work / CONFIG)  # the starter, as a file of its own


@posix_only
def test_init_prompts_force_replaces_linked_templates_not_what_they_point_at(
    work: Path, outside: Path
) -> None:
    assert meta_tools(work, "init", "--prompts").returncode == 0
    templates = work / PROMPTS_DIR
    shipped = (templates / "tool_selection.j2").read_text()
    victim = outside / "victim.txt"
    (templates / "tool_selection.j2").unlink()
    (templates / "tool_selection.j2").symlink_to(victim)
    (templates / "README.md").unlink()
    (templates / "README.md").symlink_to(outside / "planted.md")  # points nowhere
    done = meta_tools(work, "init", "--prompts", "--force")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "keep me"
    assert not (outside / "planted.md").exists()
    assert not (templates / "tool_selection.j2").is_symlink()
    assert (templates / "tool_selection.j2").read_text() == shipped
    assert not (templates / "README.md").is_symlink()


@posix_only
def test_init_prompts_replaces_a_linked_templates_folder_only_with_force(
    work: Path, outside: Path
) -> None:
    (work / PROMPTS_DIR).symlink_to(outside)
    refused = meta_tools(work, "init", "--prompts")
    assert refused.returncode == 1
    assert f"{PROMPTS_DIR!r} is a symbolic link to {str(outside)!r}" in refused.stderr
    assert not (work / CONFIG).exists()
    done = meta_tools(work, "init", "--prompts", "--force")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert not (work / PROMPTS_DIR).is_symlink()
    assert (work / PROMPTS_DIR / "tool_selection.j2").is_file()


def test_init_force_does_not_replace_a_folder_where_the_config_goes(work: Path) -> None:
    (work / CONFIG).mkdir()
    done = meta_tools(work, "init", "--prompts", "--force")
    assert done.returncode == 1
    assert done.stderr == (
        f"error: {CONFIG!r} is a folder; nothing was written: --force does not replace this\n"
    )
    assert not (work / PROMPTS_DIR).exists()


# -- group --write --------------------------------------------------------------------------


@pytest.fixture
def grouped(work: Path) -> Path:
    """A folder whose config has no servers: `group --tools group_sample_tools` is quick."""
    (work / "group_sample_tools.py").write_text((REPO / "tests/faults/serve_tools.py").read_text())
    (work / CONFIG).write_text("{}")
    return work


def group(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return meta_tools(folder, "group", "--by", "server", "--tools", "group_sample_tools", *args)


@posix_only
def test_group_write_refuses_a_link_that_points_nowhere(grouped: Path, outside: Path) -> None:
    planted = outside / "planted.json"
    (grouped / "proposal.json").symlink_to(planted)
    done = group(grouped, "--write", "proposal.json")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"error: proposal.json is a symbolic link to {str(planted)!r}\n"
        f"hint: {LINK_HINT}, or choose another file\n"
    )
    assert not planted.exists()


@posix_only
def test_group_write_force_replaces_the_link_itself(grouped: Path, outside: Path) -> None:
    victim = outside / "victim.txt"
    (grouped / "proposal.json").symlink_to(victim)
    done = group(grouped, "--write", "proposal.json", "--force")
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "keep me"
    assert not (grouped / "proposal.json").is_symlink()
    proposal = json.loads((grouped / "proposal.json").read_text())
    assert proposal["Python tools"]["tools"] == ["add", "shout"]


def test_group_write_never_replaces_a_folder(grouped: Path) -> None:
    (grouped / "proposal.json").mkdir()
    done = group(grouped, "--write", "proposal.json", "--force")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "error: proposal.json is a folder\n"
        "hint: only a file or a link is replaced: choose another path\n"
    )


# -- the writer itself ----------------------------------------------------------------------


@posix_only
def test_a_fifo_is_refused_even_with_force_and_never_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for force in (False, True):
        with pytest.raises(WriteRefusedError, match="is not a regular file; nothing was written"):
            write_file(fifo, "text", force=force)


@posix_only
def test_a_folder_to_make_is_a_link_replaced_only_with_force(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "made").symlink_to(target)
    with pytest.raises(WriteRefusedError, match="is a symbolic link to"):
        make_folder(tmp_path / "made", force=False)
    make_folder(tmp_path / "made", force=True)
    assert (tmp_path / "made").is_dir() and not (tmp_path / "made").is_symlink()
    (tmp_path / "file").write_text("x")
    with pytest.raises(WriteRefusedError, match="a folder is needed there: move it away"):
        make_folder(tmp_path / "file", force=True)


def test_a_free_path_gets_the_text_and_an_existing_file_is_kept_without_force(
    tmp_path: Path,
) -> None:
    path = tmp_path / "out.json"
    write_file(path, "first ✓", force=False)
    with pytest.raises(WriteRefusedError, match="exists; nothing was written: pass --force"):
        write_file(path, "second", force=False)
    assert path.read_text(encoding="utf-8") == "first ✓"
    write_file(path, "second", force=True)
    assert path.read_text(encoding="utf-8") == "second"
