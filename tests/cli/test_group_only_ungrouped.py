"""`meta-tools group --only-ungrouped` (run as the installed command over the demo server):
the config's categories kept as written, only the tools in none of them grouped."""

import fnmatch
import json
from pathlib import Path
from typing import Any

from benchmarks.grouping import demo_tools
from meta_tools.support.text import slugify
from tests.cli.test_group import meta_tools as run_command
from tests.fakes.llm_server import FakeLLMServer, Reply, openai_tool_reply, wire_tool_call

REPO = Path(__file__).parents[2]
DEMO_SERVER = {"command": "python", "args": ["-m", "meta_tools.demo", "--root", "."]}
SECTIONS = ("$schema", "mcp_servers", "model", "defaults")
FILES = {
    "description": "List and read the files of the ${PROJECT} folder.",
    "tool_usage_notes": "Paths are relative to the project folder.",
    "tools": ["list_files", "read_file"],
}
DATES = {"description": "Date arithmetic and what a date is.", "tools": ["*date*"]}


def meta_tools(folder: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    return run_command(folder, *args, env={"PROJECT": "demo", **(env or {})})


def demo_tool_names() -> list[str]:
    return [t.name for t in demo_tools()[0]]


def write_config(folder: Path, categories: dict[str, Any]) -> dict[str, Any]:
    config = {"$schema": "./schema.json", "mcp_servers": {"demo": DEMO_SERVER}, **categories}
    (folder / "Meta_tool_config.json").write_text(json.dumps(config))
    return config


def categories(config: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in config.items() if k not in SECTIONS}


def members(entry: dict[str, Any], names: list[str]) -> set[str]:
    """The tools a category's names and globs match, as the router resolves them."""
    return {n for pattern in entry["tools"] for n in names if fnmatch.fnmatchcase(n, pattern)}


def test_only_ungrouped_keeps_your_categories_as_written_and_groups_only_the_rest(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"Files": FILES, "Dates": DATES})
    done = meta_tools(tmp_path, "group", "--only-ungrouped", "--no-model")
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    # the file's sections, then your categories, both exactly as written, then the new ones
    assert list(proposal)[:4] == ["$schema", "mcp_servers", "Files", "Dates"]
    assert proposal["mcp_servers"] == config["mcp_servers"]
    assert (proposal["Files"], proposal["Dates"]) == (config["Files"], config["Dates"])
    names = demo_tool_names()
    yours = members(FILES, names) | members(DATES, names)
    assert yours == {"list_files", "read_file", "date_difference", "shift_date", "describe_date"}
    new = {k: v for k, v in categories(proposal).items() if k not in ("Files", "Dates")}
    drafted = [t for entry in new.values() for t in entry["tools"]]
    assert sorted(drafted) == sorted(set(names) - yours)  # each tool in none, once
    placed = [t for entry in categories(proposal).values() for t in members(entry, names)]
    assert sorted(placed) == sorted(names)  # every tool in exactly one category
    slugs = [slugify(name).lower() for name in categories(proposal)]
    assert len(set(slugs)) == len(slugs)
    assert all(entry["description"] and entry["tools"] for entry in new.values())
    lines = done.stderr.splitlines()
    assert (
        "note: 'search_files' reads like your category 'Files'; to put it there, add"
        ' "search_files" to its "tools"'
    ) in lines
    sizes = sorted(len(entry["tools"]) for entry in new.values())
    assert lines[-1] == (
        f"{len(new)} new categories over {len(drafted)} tools in no category (largest"
        f" {sizes[-1]}, smallest {sizes[0]}), named from the tools' own words; your 2"
        " categories kept as written; printed above. Edit names and descriptions, then"
        " `meta-tools validate`."
    )
    (tmp_path / "proposal.json").write_text(done.stdout)
    checked = meta_tools(tmp_path, "validate", "proposal.json", env={"OPENAI_API_KEY": "sk-x"})
    assert checked.returncode == 0, checked.stderr


def test_only_ungrouped_when_every_tool_is_in_a_category_prints_the_config_unchanged(
    tmp_path: Path,
) -> None:
    config = write_config(tmp_path, {"Files": FILES, "Everything else": {**DATES, "tools": ["*"]}})
    done = meta_tools(tmp_path, "group", "--only-ungrouped")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == config
    assert done.stderr == (
        "every tool is in one of your 2 categories, so nothing was grouped; the config is"
        " printed above unchanged.\n"
    )


def test_only_ungrouped_by_server_writes_a_new_category_named_apart_from_yours_and_warns_of_a_missing_tool(
    tmp_path: Path,
) -> None:
    mine = {"description": "The demo's file tools.", "tools": ["list_files", "no_such_tool"]}
    config = write_config(tmp_path, {"demo": mine})
    done = meta_tools(tmp_path, "group", "--only-ungrouped", "--by", "server", "-w", "out.json")
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    written = json.loads((tmp_path / "out.json").read_text())
    assert list(categories(written)) == ["demo", "demo 2"]  # one per server, apart from yours
    assert written["demo"] == config["demo"]  # the missing name kept as written
    assert sorted(written["demo 2"]["tools"]) == sorted(set(demo_tool_names()) - {"list_files"})
    warnings = [line for line in done.stderr.splitlines() if "no_such_tool" in line]
    assert warnings == [
        "warning: $.\"demo\".tools[1]: tool 'no_such_tool' is listed but no source provides"
        " it (the category is kept as written)"
    ]
    assert done.stderr.splitlines()[-1].endswith(
        "your 1 category kept as written; written to out.json. Edit names and descriptions,"
        " then `meta-tools validate`."
    )


def test_only_ungrouped_lets_the_model_name_only_the_new_categories_never_as_yours(
    tmp_path: Path, llm_server: FakeLLMServer
) -> None:
    model = {"name": "fake-model", "base_url": llm_server.openai_base_url, "api_key_env": "KEY"}
    (tmp_path / "Meta_tool_config.json").write_text(
        json.dumps({"model": model, "mcp_servers": {"demo": DEMO_SERVER}, "Files": FILES})
    )
    named = [
        {"id": 0, "name": "Files", "description": "Also files."},
        {"id": 1, "name": "Everything else", "description": "The rest."},
    ]
    call = wire_tool_call("call_1", "name_categories", {"categories": named})
    llm_server.enqueue(Reply(body=openai_tool_reply(call)))
    done = meta_tools(tmp_path, "group", "--only-ungrouped", "-k", "2", env={"KEY": "sk-test"})
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    assert list(categories(proposal)) == ["Files", "Files 2", "Everything else"]
    assert proposal["Files"] == FILES
    assert proposal["Files 2"]["description"] == "Also files."
    (request,) = llm_server.requests
    asked = json.dumps(request.body["messages"])
    assert "search_files" in asked and "list_files" not in asked  # only the new drafts


def test_only_ungrouped_keeps_a_comment_and_categories_nested_under_categories(
    tmp_path: Path,
) -> None:
    config = {
        "$comment": "hand-made on Monday",
        "mcp_servers": {"demo": DEMO_SERVER},
        "categories": {"Files": FILES, "Dates": DATES},
    }
    (tmp_path / "Meta_tool_config.json").write_text(json.dumps(config))
    done = meta_tools(tmp_path, "group", "--only-ungrouped", "--no-model")
    assert done.returncode == 0, done.stderr
    proposal = json.loads(done.stdout)
    assert list(proposal) == ["$comment", "mcp_servers", "categories"]
    assert proposal["$comment"] == config["$comment"]
    grouped = proposal["categories"]
    assert list(grouped)[:2] == ["Files", "Dates"] and len(grouped) > 2  # new ones after yours
    assert (grouped["Files"], grouped["Dates"]) == (FILES, DATES)
    checked = meta_tools(tmp_path, "group", "--only-ungrouped", "--no-model", "-w", "again.json")
    assert checked.returncode == 0, checked.stderr
    valid = meta_tools(tmp_path, "validate", "again.json")
    assert valid.returncode == 0, valid.stdout + valid.stderr
