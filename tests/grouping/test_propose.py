"""Proposals: by server, and by topic with a size bound, units kept whole, deterministic."""

import time

import pytest

from meta_tools.grouping.cluster import automatic_k, default_max_size, merge_units
from meta_tools.grouping.features import TermSpace
from meta_tools.grouping.name import unique_names
from meta_tools.grouping.plan import config_with, draft_categories
from meta_tools.grouping.propose import by_server, by_topic
from meta_tools.support.text import slugify
from meta_tools.tools.base import BaseTool
from tests.grouping.helpers import MUSIC, WEATHER, sample_tool

TOOLS = [WEATHER[0], MUSIC[0], WEATHER[1], MUSIC[1], WEATHER[2], MUSIC[2], WEATHER[3], MUSIC[3]]


def names(tools: list[BaseTool], groups: list[list[int]]) -> list[list[str]]:
    return sorted(sorted(tools[p].name for p in group) for group in groups)


def test_by_topic_separates_two_topics_written_in_different_words() -> None:
    grouping = by_topic(TOOLS, [""] * len(TOOLS), k=2)
    assert names(TOOLS, grouping.groups) == [
        ["air_quality", "get_forecast", "get_rain_radar", "sunrise_times"],
        ["artist_albums", "search_songs", "song_lyrics", "top_charts"],
    ]


def test_by_topic_is_the_same_for_the_same_tools() -> None:
    tools = [
        sample_tool(f"tool_{i}", f"does thing {i % 5} with item {i % 3}", "x") for i in range(60)
    ]
    first = by_topic(tools, [""] * 60, k=6).groups
    assert by_topic(tools, [""] * 60, k=6).groups == first


def test_the_closest_tools_are_merged_first_so_near_twins_stay_together() -> None:
    # Three pairs of near twins and two loners; four groups: every pair stays whole.
    words = ["alpha beta", "alpha beta gamma", "delta epsilon", "delta epsilon zeta", "eta theta"]
    words += ["eta theta iota", "kappa lambda", "mu nu"]
    space = TermSpace.fit([w.split() for w in words], min_documents=1)
    rows = space.vectors([w.split() for w in words])
    labels = merge_units(rows, [[i] for i in range(8)], 4, max_size=3)
    assert labels[0] == labels[1] and labels[2] == labels[3] and labels[4] == labels[5]
    assert len(set(labels)) == 4


def test_a_tool_like_no_other_joins_a_group_instead_of_making_its_own() -> None:
    odd = sample_tool("lorem_ipsum", "Dolor sit amet.")
    tools = [*WEATHER, *MUSIC, odd]
    # two topics and two groups: without the rule the topics would share one group and the
    # odd tool keep the other
    grouping = by_topic(tools, [""] * len(tools), k=2)
    assert [sorted(set(g) - {8}) for g in sorted(grouping.groups)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    # with only as many tools as groups of two allow, it keeps its own group
    few = [WEATHER[0], WEATHER[1], MUSIC[0], MUSIC[1], odd]
    assert [4] in by_topic(few, [""] * 5, k=3).groups


def test_when_no_two_groups_fit_together_the_smallest_is_spread_over_the_others() -> None:
    # Three servers of two tools, bound 3, two groups: no two servers fit together, so the
    # first (a sun tool and a song tool) is spread, each tool to the group it matches.
    words = ["sun", "song", "sun rain", "sun rain", "song album", "song album"]
    space = TermSpace.fit([w.split() for w in words], min_documents=1)
    rows = space.vectors([w.split() for w in words])
    labels = merge_units(rows, [[0, 1], [2, 3], [4, 5]], 2, max_size=3)
    assert labels == [labels[2], labels[4], labels[2], labels[2], labels[4], labels[4]]
    assert labels[2] != labels[4]


def test_with_fewer_servers_than_groups_the_largest_server_is_split() -> None:
    space = TermSpace.fit([["a"], ["b"], ["c"], ["d"]], min_documents=1)
    rows = space.vectors([["a"], ["b"], ["c"], ["d"]])
    labels = merge_units(rows, [[0, 1, 2], [3]], 3, max_size=3)
    assert len(set(labels)) == 3


def test_by_topic_never_passes_the_size_bound_and_covers_every_tool() -> None:
    grouping = by_topic(TOOLS, [""] * len(TOOLS), k=2, max_size=3)
    sizes = sorted(len(g) for g in grouping.groups)
    assert max(sizes) <= 3
    assert sorted(p for g in grouping.groups for p in g) == list(range(len(TOOLS)))
    assert len(sizes) == 3  # two groups of three cannot hold eight tools: k is raised


def test_a_servers_tools_stay_together_unless_the_server_is_too_big() -> None:
    # One server mixes a music tool into weather tools: it stays whole.
    sources = ["sky", "", "sky", "", "sky", "", "sky", "sky"]
    grouping = by_topic(TOOLS, sources, k=2, max_size=5)
    together = next(g for g in grouping.groups if 0 in g)
    assert {0, 2, 4, 6, 7} == set(together)
    # Above the bound, its tools are placed one by one, by topic.
    split = by_topic(TOOLS, ["one"] * len(TOOLS), k=2, max_size=4)
    assert names(TOOLS, split.groups) == names(TOOLS, by_topic(TOOLS, [""] * 8, k=2).groups)


def test_by_server_makes_one_group_per_source_in_order_of_appearance() -> None:
    grouping = by_server(TOOLS, ["b", "a", "b", "a", "b", "a", "b", "a"])
    assert grouping.groups == [[0, 2, 4, 6], [1, 3, 5, 7]]


def test_merge_units_refuses_groups_that_cannot_hold_every_tool() -> None:
    space = TermSpace.fit([["a"], ["a"], ["b"]])
    rows = space.vectors([["a"], ["a"], ["b"]])
    with pytest.raises(ValueError, match="cannot hold 3"):
        merge_units(rows, [[0], [1], [2]], 1, max_size=2)
    with pytest.raises(ValueError, match="between 1 and"):
        merge_units(rows, [[0], [1], [2]], 4, max_size=2)


def test_automatic_k_and_the_default_bound() -> None:
    assert [automatic_k(n) for n in (1, 15, 527, 4076)] == [1, 4, 23, 64]
    assert default_max_size(527, 8) == 99


def test_drafts_are_named_from_the_tools_words_and_make_a_config() -> None:
    drafts = draft_categories(TOOLS, [""] * len(TOOLS), k=2)
    by_first = {d.tools[0]: d for d in drafts}
    weather = by_first["get_forecast"]
    assert weather.name == "City & Weather"
    # a small group says what each tool does, in the first words of its description
    assert weather.description == (
        "City, weather and rain: weather forecast for a city; rain radar and precipitation map"
        " of a city; air quality and pollution index of a city, like the weather; sunrise and"
        " sunset times of a city for weather planning."
    )
    assert (
        weather.tool_usage_notes
        == "Inputs shared by several tools: city (4 tools). Tools from Python (4)."
    )
    config = config_with(drafts, {"defaults": {"max_iterations": 3}})
    assert list(config) == ["defaults", *(d.name for d in drafts)]
    assert config[weather.name]["tools"] == list(weather.tools)


def test_words_every_tool_says_name_no_group() -> None:
    # Every BFCL description ends with this sentence; its words once named groups.
    boilerplate = " Note that the provided function is in Python 3 syntax."
    tools = [sample_tool(t.name, t.description + boilerplate, *t.args) for t in [*WEATHER, *MUSIC]]
    drafts = draft_categories(tools, [""] * len(tools), k=2)
    said = " ".join(f"{d.name} {d.description}".lower() for d in drafts)
    assert not {"note", "provided", "python", "syntax"} & set(said.replace(",", " ").split())
    assert sorted(d.name for d in drafts) == ["Artist & Music", "City & Weather"]
    # A lone group has no other to be told apart from: the words all its tools say name it.
    (alone,) = draft_categories(WEATHER, [""] * len(WEATHER), k=1)
    assert alone.name == "City & Weather"


def test_by_server_drafts_are_named_after_their_servers() -> None:
    drafts = draft_categories(TOOLS, ["sky", "", "sky", "", "sky", "", "sky", ""], by="server")
    assert [d.name for d in drafts] == ["sky", "Python tools"]


def test_unique_names_never_clash_as_tools_nor_take_a_section_name() -> None:
    assert unique_names(["Maps", "maps", "Maps!", "model", ""]) == [
        "Maps",
        "maps 2",
        "Maps! 3",
        "model tools",
        "Tools",
    ]


def test_a_numbered_name_keeps_its_number_within_the_slugs_64_characters() -> None:
    long = "Weatherweatherweatherweatherweatherweatherweatherweatherwe & Data"
    named = unique_names([long, long.upper(), long, "Погода", "Погода"])
    slugs = [slugify(n) for n in named]
    assert len(set(slugs)) == 5 and all(len(s) <= 64 for s in slugs)
    assert named[0] == long
    assert [s[-2:] for s in slugs[1:3]] == ["_2", "_3"]
    assert named[3:] == ["Погода", "Погода 2"]


def test_many_names_that_slug_alike_are_numbered_in_linear_time() -> None:
    def spelled(number: int) -> str:  # 5,000 spellings of one name, told apart by case only
        letters = "".join(
            c.upper() if number >> i & 1 else c for i, c in enumerate("weatherreport")
        )
        return f"{letters[:7]} & {letters[7:]}"

    given = [spelled(i) for i in range(5_000)]
    assert len(set(given)) == 5_000
    started = time.perf_counter()
    named = unique_names(given)
    assert time.perf_counter() - started < 5  # each walking past those before: 12.5 M slugs
    assert len({slugify(n) for n in named}) == 5_000
    assert named[:3] == ["weather & report", "Weather & report 2", "wEather & report 3"]


def test_no_tools_no_groups() -> None:
    assert by_topic([], []).groups == []


# Tools of one source: the action they share must not decide their groups (issue 50 item 9).
ONE_SOURCE = [
    sample_tool("search_songs", "Search, find and list songs.", "query"),
    sample_tool("search_flights", "Search, find and list flights.", "query"),
    sample_tool("play_song", "Play a song.", "name"),
    sample_tool("book_flight", "Book a flight.", "name"),
]


def test_tools_of_one_source_are_grouped_by_what_they_act_on_not_by_the_action() -> None:
    for sources in ([""] * 4, ["music-and-travel"] * 4):  # Python tools, a split server
        grouping = by_topic(ONE_SOURCE, sources, k=2, max_size=2)
        assert names(ONE_SOURCE, grouping.groups) == [
            ["book_flight", "search_flights"],
            ["play_song", "search_songs"],
        ]


def test_a_whole_server_keeps_its_actions_which_may_be_what_it_is_for() -> None:
    # Two search engines and two song servers: the engines' one shared word is `search`.
    tools = [
        sample_tool("web_search", "Search the web for pages.", "query"),
        sample_tool("song_lyrics", "Lyrics of a song.", "title"),
        sample_tool("news_search", "Search news articles.", "query"),
        sample_tool("song_chords", "Chords of a song.", "title"),
    ]
    grouping = by_topic(tools, ["web", "songs-a", "news", "songs-b"], k=2)
    assert names(tools, grouping.groups) == [
        ["news_search", "web_search"],
        ["song_chords", "song_lyrics"],
    ]
    # and is named with them; the same tools placed one by one are named by their objects
    drafts = draft_categories(tools, ["web", "songs-a", "news", "songs-b"], k=2)
    assert drafts[0].name == "Search & Articles"
    assert draft_categories(tools, [""] * 4, k=2)[0].name == "Articles & News"


def test_a_new_tool_reads_like_a_kept_category_by_what_it_acts_on_not_by_its_verb() -> None:
    from meta_tools.grouping.name import Draft
    from meta_tools.grouping.plan import closer_to_kept

    describe_date = sample_tool("describe_date", "Describe and show a date.", "date")
    numbers = [
        sample_tool("describe_numbers", "Describe and show a list.", "values"),
        sample_tool("mean_value", "Mean of values.", "values"),
    ]
    shift_date = sample_tool("shift_date", "Move a date by days and weeks.", "date")
    draft = Draft("Numbers", "", "", ("describe_numbers", "mean_value", "shift_date"))
    tools = [describe_date, *numbers, shift_date]
    found = closer_to_kept([draft], {"Dates": [describe_date]}, tools)
    assert found == [("shift_date", "Dates")]


def test_a_small_groups_description_takes_each_tools_first_clause_cut_short() -> None:
    tools = [
        sample_tool(
            "route_planner",
            "Plan a route between two places by car, bike, train, bus, ferry, plane, foot,"
            " scooter or any other way. Returns steps.",
            "start",
        ),
        sample_tool(
            "hot_news",
            "获取网易新闻热点榜，包含时政要闻、社会事件、财经资讯、科技动态及娱乐体育的全方位中文新闻资讯",
            "start",
        ),
        sample_tool("weather_now", "Current weather: temperature and wind (metric).", "start"),
    ]
    (draft,) = draft_categories(tools, [""] * 3, k=1)
    gists = draft.description.split(": ", 1)[1].rstrip(".").split("; ")
    assert gists == [
        "plan a route between two places by car, bike, train, bus, ferry",  # 12 words, at a comma
        "获取网易新闻热点榜",  # Chinese: cut at its own comma
        "current weather",  # cut at the colon
    ]
