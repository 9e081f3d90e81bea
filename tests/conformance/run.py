"""Run the official MCP conformance suite against both of our sides and gate on the two lists.

    python -m tests.conformance.run --suite PATH/TO/conformance [--out DIR] [--table FILE]

Server side: `meta-tools serve --transport http` on 127.0.0.1 and a free port, with the
config next to this file (the host's own model by sampling, so no key is needed), and
every server scenario of the suite (`--suite all`) against it. Client side: each client
scenario runs `python tests/conformance/client.py URL`, our MCP client as a category
uses it. `node` must be on PATH (`tests/conformance/run.sh` installs a pinned one).
Exit status 0 when every outcome is the one the lists expect (see `gate`), else 1.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchmarks.services import Drain, stop
from tests.conformance.gate import SIDES, Expectations, ScenarioResult, Side, judge, table

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CONFIG = HERE / "Meta_tool_config.json"
TOOLS = "tests.servers.replica_tools"
CLIENT_TIMEOUT_MS = 30_000
_LISTED = re.compile(r"^\s+- (\S+)")
_CONSOLE = "suite-console.txt"
_STAMP = re.compile(r"-\d{4}-\d\d-\d\dT[\d-]+Z$")


def scenarios(suite: str) -> dict[Side, list[str]]:
    """The suite's scenario names on each side, from `conformance list`."""
    found: dict[Side, list[str]] = {}
    for side in SIDES:
        listed = subprocess.run(
            [suite, "list", f"--{side}"], capture_output=True, text=True, check=True, timeout=60
        ).stdout
        found[side] = [m.group(1) for line in listed.splitlines() if (m := _LISTED.match(line))]
    return found


@contextmanager
def served_router() -> Iterator[str]:
    """`meta-tools serve --transport http` on a free port of 127.0.0.1; its MCP URL."""
    script = Path(sys.executable).with_name("meta-tools")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "meta_tools.cli"]
    command += ["serve", "--transport=http", "--port=0", "--no-reload", f"--config={CONFIG}"]
    command += ["--tools", TOOLS]
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = Drain(process)
    try:
        if not output.wait_for("/mcp\n", timeout=60):
            raise RuntimeError(f"meta-tools serve did not start:\n{output.text[-3000:]}")
        match = re.search(r"on (http://127\.0\.0\.1:\d+/mcp)", output.text)
        if match is None:
            raise RuntimeError(f"meta-tools serve printed no address:\n{output.text[-3000:]}")
        yield match.group(1)
    finally:
        stop(process)
        output.join()


def _checks(folder: Path) -> list[dict[str, object]]:
    path = folder / "checks.json"
    if not path.exists():
        return [{"id": "no-result", "status": "FAILURE", "errorMessage": f"no {path}"}]
    loaded: list[dict[str, object]] = json.loads(path.read_text("utf-8"))
    return loaded


def run_server(suite: str, url: str, out: Path) -> None:
    """Every server scenario (`--suite all`), one after another, against `url`."""
    subprocess.run(
        [suite, "server", "--url", url, "--suite", "all", "-o", str(out / "server")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def server_results(out: Path, names: list[str]) -> list[ScenarioResult]:
    """The results `run_server` left in `out`, one per scenario name (a missing one fails)."""
    folder = out / "server"
    by_name = {
        _STAMP.sub("", path.name).removeprefix("server-"): path
        for path in sorted(folder.iterdir())
        if path.is_dir()
    }
    return [
        ScenarioResult.from_checks("server", name, _checks(by_name.get(name, folder / name)))
        for name in names
    ]


def run_client(suite: str, out: Path, names: list[str]) -> None:
    """Each client scenario against `tests/conformance/client.py`, one at a time."""
    command = f"{sys.executable} {HERE / 'client.py'}"
    timeout = ["--timeout", str(CLIENT_TIMEOUT_MS)]
    for name in names:
        folder = out / "client" / name.replace("/", "_")
        done = subprocess.run(
            [
                suite,
                "client",
                "--command",
                command,
                "--scenario",
                name,
                *timeout,
                "-o",
                str(folder),
            ],
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_MS / 1000 + 60,
            check=False,
        )
        (folder / _CONSOLE).write_text(done.stdout + done.stderr, "utf-8")


def client_results(out: Path, names: list[str]) -> list[ScenarioResult]:
    """The results `run_client` left in `out`; a client that exited with an error fails."""
    results = []
    for name in names:
        folder = out / "client" / name.replace("/", "_")
        runs = sorted(path.parent for path in folder.rglob("checks.json"))
        console = folder / _CONSOLE
        exited = console.exists() and "CLIENT EXITED WITH ERROR" in console.read_text("utf-8")
        checks = _checks(runs[-1] if runs else folder)
        results.append(ScenarioResult.from_checks("client", name, checks, exited_with_error=exited))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True, help="the suite's `conformance` executable")
    parser.add_argument("--out", type=Path, help="where the suite writes its results")
    parser.add_argument("--table", type=Path, help="also append the Markdown table to this file")
    parser.add_argument("--report-only", action="store_true", help="print the table, exit 0")
    parser.add_argument(
        "--reuse", action="store_true", help="judge the results already in --out, run nothing"
    )
    args = parser.parse_args(argv)
    suite: str = args.suite
    version = subprocess.run(
        [suite, "--version"], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
    expectations = Expectations.load()
    names = scenarios(suite)
    out: Path = args.out or Path(tempfile.mkdtemp(prefix="conformance-"))
    if not args.reuse:
        with served_router() as url:
            run_server(suite, url, out)
        run_client(suite, out, names["client"])
    results = server_results(out, names["server"]) + client_results(out, names["client"])
    verdicts, problems = judge(results, expectations, version=version, known_scenarios=names)
    text = table(verdicts, version=version)
    print(text)
    if args.table:
        with args.table.open("a", encoding="utf-8") as file:
            file.write(text + "\n")
    problems += [problem for v in verdicts for problem in v.problems]
    counts = {o: sum(v.result.outcome == o for v in verdicts) for o in ("pass", "warn", "fail")}
    print(
        f"suite {version}: {counts['pass']} pass, {counts['warn']} warn, {counts['fail']} fail; results in {out}"
    )
    for problem in problems:
        print(f"conformance {version}: {problem}", file=sys.stderr)
    if problems and not args.report_only:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
