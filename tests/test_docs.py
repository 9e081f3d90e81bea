"""The documentation site's pages: their Python blocks run as written, offline and without
a key, and their benchmark tables are the ones `python -m benchmarks report` generates."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.report import GENERATED, fill, tables
from tests.cli.test_first_hour import no_key_env

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BLOCK = re.compile(r"^( *)```python\n(.*?)^\1```", re.DOTALL | re.MULTILINE)
#: What a block prints, after its `# expected` comments: `print(x)  # 3` expects "3".
EXPECTED = re.compile(r"^\s*print\(.*\)\s+#\s*(.+)$", re.MULTILINE)


def python_blocks() -> list[tuple[str, str]]:
    """(page, code) of every Python block of the docs, dedented by its fence's indent."""
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
            indent = len(match.group(1))
            code = "".join(line[indent:] for line in match.group(2).splitlines(True))
            found.append((page.name, code))
    return found


BLOCKS = python_blocks()


def test_the_docs_have_python_blocks() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize(
    ("page", "code"), BLOCKS, ids=[f"{p}-{i}" for i, (p, _) in enumerate(BLOCKS)]
)
def test_a_docs_block_runs_without_a_key_and_prints_what_its_comments_say(
    page: str, code: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=no_key_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr
    said = [line.strip() for line in done.stdout.splitlines()]
    for expected in EXPECTED.findall(code):
        if expected.startswith("the "):  # a comment in words, not a value
            continue
        assert expected.strip() in said, (page, expected, said)


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")}
    assert {p for p in pages if p not in nav} == set()


@pytest.mark.parametrize("name", GENERATED)
def test_the_benchmark_tables_are_the_ones_the_results_give(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "<!-- report:" in text
    assert fill(text, tables()) == text, "run `python -m benchmarks report`"


def test_every_result_file_is_one_benchmark_keyed_by_model_commit_and_date() -> None:
    import json

    for path in sorted((ROOT / "benchmarks" / "results").glob("*.json")):
        stored = json.loads(path.read_text())
        assert stored["benchmark"] == path.stem
        for key, run in stored["runs"].items():
            model, commit, date = key.split("@")
            assert (run["model"] or "no-model", run["commit"], run["date"][:10]) == (
                model,
                commit,
                date,
            )
            assert run["machine"] and run["cited_for"]
