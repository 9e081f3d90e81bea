"""The grouping benchmark on a tiny catalog written here (never the public data)."""

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from benchmarks import grouping
from benchmarks.catalog import load_catalog, load_queries
from meta_tools.llm import AssistantTurn, ChatRequest, ScriptedModel, ToolCall

TOOLS = [
    ("sky", "Weather", "forecast", "Weather forecast for a city: rain and wind."),
    ("sky", "Weather", "radar", "Rain radar map of a city."),
    ("air", "Weather", "air_quality", "Air quality and pollution of a city."),
    ("tunes", "Music", "songs", "Search songs by title or artist."),
    ("tunes", "Music", "lyrics", "Lyrics of a song by title and artist."),
    ("charts", "Music", "top_charts", "The most played songs this week."),
]
QUERIES = [
    ("Will it rain in Paris tomorrow? Check the forecast.", "sky::forecast"),
    ("Find the lyrics of a song by its title.", "tunes::lyrics"),
    ("Is the air quality in Delhi safe today?", "air::air_quality"),
]


def write_dataset(folder: Path, name: str, *, queries: bool) -> None:
    (folder / name).mkdir(parents=True)
    with (folder / name / "catalog.jsonl").open("w") as out:
        for group, category, tool, description in TOOLS:
            entry = {
                "id": f"{group}::{tool}",
                "name": tool,
                "description": description,
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "group": group,
                "category": category,
            }
            out.write(json.dumps(entry) + "\n")
    if queries:
        with (folder / name / "queries.jsonl").open("w") as out:
            for number, (query, gold) in enumerate(QUERIES):
                out.write(json.dumps({"qid": number, "query": query, "gold": [gold]}) + "\n")


def test_adjusted_rand_index_is_one_for_the_same_grouping_and_below_zero_when_worse_than_chance() -> (
    None
):
    assert grouping.adjusted_rand_index(list("aabb"), list("xxyy")) == 1.0
    assert grouping.adjusted_rand_index(list("aabb"), list("xyxy")) == pytest.approx(-0.5)
    assert grouping.adjusted_rand_index(list("aaaa"), list("aaaa")) == 1.0


def test_every_grouping_is_measured_with_queries_and_with_the_description_proxy(
    tmp_path: Path,
) -> None:
    write_dataset(tmp_path, "stabletoolbench", queries=True)
    write_dataset(tmp_path, "livemcpbench", queries=False)
    result = grouping.run(tmp_path)
    assert list(result) == ["livemcpbench", "stabletoolbench"]
    with_queries = result["stabletoolbench"]["groupings"]
    assert list(with_queries) == ["hand-made", "hand-made, words", "by server", "by topic"]
    hand, server, topic = (
        with_queries["hand-made"],
        with_queries["by server"],
        with_queries["by topic"],
    )
    assert (hand["categories"], hand["largest"], hand["ari"]) == (2, 3, 1.0)
    assert (server["categories"], server["largest"], server["smallest"]) == (4, 2, 1)
    assert server["check"]["too_small"] == 2
    assert topic["categories"] == 2 and topic["covers_every_tool"]
    assert topic["largest"] <= 5  # 1.5 × the mean of 3, rounded up
    assert hand["routability"] == {"recall@1": 1.0, "recall@2": 1.0}
    assert hand["within_recall@20"] == 1.0
    proxy = result["livemcpbench"]
    assert proxy["query_source"] == "each tool's description (proxy)"
    assert "within_recall@20" not in proxy["groupings"]["hand-made"]


def test_the_model_routes_with_the_category_tools_a_main_agent_gets(tmp_path: Path) -> None:
    write_dataset(tmp_path, "stabletoolbench", queries=True)
    catalog = load_catalog(tmp_path, "stabletoolbench")
    queries = load_queries(tmp_path, "stabletoolbench")
    drafts = grouping._hand(catalog, words=False)
    seen: list[list[str]] = []

    def main_agent(request: ChatRequest) -> AssistantTurn:
        seen.append([t.name for t in request.tools])
        asked = request.messages[-1].content
        if "lyrics" in asked:
            return AssistantTurn(tool_calls=[ToolCall(name="music", arguments={})])
        if "rain" in asked:
            return AssistantTurn(tool_calls=[ToolCall(name="weather", arguments={})])
        return AssistantTurn(text="I cannot tell.")

    async def go() -> dict[str, Any]:
        return await grouping.model_routability(
            ScriptedModel.from_function(main_agent), catalog, drafts, queries, sample=3
        )

    found = anyio.run(go)
    assert found == {"recall@1": round(2 / 3, 4), "asked": 3, "no_call": 1}
    assert seen == [["weather", "music"]] * 3


def test_the_ceiling_counts_a_query_split_over_categories_and_servers_are_compared(
    tmp_path: Path,
) -> None:
    write_dataset(tmp_path, "stabletoolbench", queries=False)
    with (tmp_path / "stabletoolbench" / "queries.jsonl").open("w") as out:
        for number, (subset, gold) in enumerate(
            [
                ("alike", ["sky::forecast", "air::air_quality"]),  # two weather servers
                ("apart", ["sky::radar", "tunes::songs"]),  # weather and music
            ]
        ):
            entry = {"qid": number, "query": "q", "gold": gold, "subset": subset}
            out.write(json.dumps(entry) + "\n")
    catalog = load_catalog(tmp_path, "stabletoolbench")
    queries = load_queries(tmp_path, "stabletoolbench")
    hand = grouping._hand(catalog, words=False)
    assert grouping._ceiling(catalog, hand, queries[:1]) == 1.0
    assert grouping._ceiling(catalog, hand, queries[1:]) == 0.5
    cosine = grouping.gold_server_cosine(catalog, queries, pairs=50)
    assert cosine["alike"] > cosine["apart"]
    assert set(cosine) == {"alike", "apart", "random, same hand-made category", "random"}


def test_the_scale_case_groups_tools_that_all_read_alike_and_shows_a_table() -> None:
    from benchmarks.run import show_grouping

    rows = grouping.run_scale(sizes=(60,))
    assert [(r["tools"], r["kind"]) for r in rows] == [(60, "identical"), (60, "pathological")]
    for row in rows:
        assert (row["categories"], row["largest"]) == (8, 12)  # √60 groups, 1.5 × the mean
        assert 0 < row["merge_cosines_per_units2"] <= 2  # a full search per merge: about 60 / 2
        assert row["merge_peak_mb"] >= 0
    table = show_grouping({"scale": rows}).splitlines()
    assert table[0] == "scale, tools that all read alike (every pair a tie):"
    assert table[4].startswith("| 60    | identical    | 8          | 12      |")


SMALL_SERVERS = {
    "weather": [
        ("forecast", "Weather forecast for a city, with rain and wind."),
        ("rain_radar", "Rain radar and precipitation map of a city."),
        ("sunrise", "Sunrise and sunset times of a city."),
    ],
    "music": [
        ("find_songs", "Find songs of an artist in the music catalog."),
        ("lyrics", "Lyrics of a song of an artist."),
        ("top_songs", "The most played songs in the music charts."),
    ],
    "mail": [
        ("send_mail", "Send an email message to a recipient address."),
        ("inbox", "The newest email messages of the inbox."),
        ("mail_search", "Search email messages by sender address."),
    ],
    "short": [("one", "A server of one tool is never drawn.")],
}


def test_small_sets_mix_a_few_servers_and_the_demo_is_scored_against_its_shipping_grouping(
    tmp_path: Path,
) -> None:
    from benchmarks.run import show_grouping

    (tmp_path / "sealtools").mkdir()
    with (tmp_path / "sealtools" / "catalog.jsonl").open("w") as out:
        for server, tools in SMALL_SERVERS.items():
            for name, description in tools:
                entry = {"id": f"{server}::{name}", "name": name, "description": description}
                out.write(json.dumps({**entry, "group": server, "input_schema": None}) + "\n")
    sets = grouping.small_sets(tmp_path, "sealtools", range(5))
    assert len(sets) == 5
    for entries in sets:  # three servers of three tools each, never the one-tool server
        assert len(entries) == 9 and {e["group"] for e in entries} == {"weather", "music", "mail"}
    assert grouping.small_sets(tmp_path, "sealtools", range(5)) == sets  # the same every time
    result = grouping.run_small(tmp_path, split="tune")
    assert result["sets"]["sealtools"]["sets"] == len(grouping.SMALL_SEEDS["tune"])
    assert result["sets"]["sealtools"]["mean_ari"] == 1.0  # three topics in different words
    demo = result["sets"]["demo"]
    assert demo["mean_ari"] >= 0.6 and len(demo["names"]) == 4
    shown = show_grouping({"small": result})
    assert "small sets, every tool on its own (tune split)" in shown
    assert "| sealtools  | 25   | 1.000    | 1.000  | 100%" in shown
