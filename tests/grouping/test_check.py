"""The grouping check: each finding on a grouping made to cause it, none on a clean one."""

from meta_tools.grouping.check import CategoryView, check_grouping
from tests.grouping.helpers import MUSIC, WEATHER, sample_tool

CLEAN = [
    CategoryView(
        "Weather", "Forecasts, rain and air quality for any city, today or this week.", WEATHER
    ),
    CategoryView(
        "Music", "Find songs, albums and lyrics, and what is popular in music now.", MUSIC
    ),
]


def kinds(views: list[CategoryView]) -> list[tuple[str, str]]:
    return [(f.kind, f.category) for f in check_grouping(views)]


def test_a_clean_grouping_has_no_findings() -> None:
    assert check_grouping(CLEAN) == []


def test_categories_described_alike_are_confusable() -> None:
    views = [
        CategoryView("Weather", "Weather forecasts and rain for a city.", WEATHER),
        CategoryView("Weather 2", "Weather forecasts and rain of a city.", MUSIC),
    ]
    findings = [f for f in check_grouping(views) if f.kind == "confusable"]
    assert [str(f) for f in findings] == [
        "grouping: categories 'Weather' and 'Weather 2' are described alike (overlap 0.86):"
        " a main agent may confuse them; say what sets each apart"
    ]


def test_a_tool_that_reads_like_another_category_is_misplaced() -> None:
    views = [
        CategoryView("Weather", CLEAN[0].description, [*WEATHER, MUSIC[2]]),
        CategoryView("Music", CLEAN[1].description, [m for m in MUSIC if m is not MUSIC[2]]),
    ]
    findings = [f for f in check_grouping(views) if f.kind == "misplaced"]
    assert [f.message for f in findings] == [
        "1 tool of 'Weather' read more like 'Music': 'song_lyrics'; move it or say in the"
        " descriptions what sets the categories apart"
    ]


def test_too_large_and_too_small_categories() -> None:
    many = [
        sample_tool(f"forecast_{i}", f"Weather forecast number {i} for a city.") for i in range(9)
    ]
    views = [
        CategoryView("Weather", "Forecasts, rain radar and air quality by city.", many, 4),
        CategoryView("Music", "Song lyrics by title and artist.", [MUSIC[2]]),
    ]
    assert kinds(views) == [("too_large", "Weather"), ("too_small", "Music")]


def test_a_description_that_repeats_the_tool_names_is_uninformative() -> None:
    views = [CategoryView("Weather", "Get forecast and air quality tools.", WEATHER), CLEAN[1]]
    assert kinds(views) == [("uninformative", "Weather")]


def test_a_tool_listed_in_two_categories_is_not_misplaced_in_either() -> None:
    # Allowed, and common (a file reader in "Files" and in "Code"): neither copy belongs
    # "in the other category", since the other already lists it.
    shared = sample_tool(
        "city_playlist", "Weather-matched music: songs for the rain or sun of a city.", "city"
    )
    views = [
        CategoryView("Weather", CLEAN[0].description, [*WEATHER, shared]),
        CategoryView("Music", CLEAN[1].description, [*MUSIC, shared]),
    ]
    assert [f for f in check_grouping(views) if f.kind == "misplaced"] == []


def test_a_tool_in_two_categories_that_reads_like_a_third_is_still_misplaced() -> None:
    maps = [
        sample_tool("route_plan", "Driving route between two addresses on the map.", "start"),
        sample_tool("geocode", "Map coordinates of an address or place.", "address"),
    ]
    views = [
        CategoryView("Weather", CLEAN[0].description, [*WEATHER, MUSIC[2]]),
        CategoryView("Maps", "Routes, places and coordinates on a map.", [*maps, MUSIC[2]]),
        CategoryView("Music", CLEAN[1].description, [m for m in MUSIC if m is not MUSIC[2]]),
    ]
    misplaced = [(f.category, f.message) for f in check_grouping(views) if f.kind == "misplaced"]
    assert [c for c, _ in misplaced] == ["Weather", "Maps"]
    assert all("read more like 'Music': 'song_lyrics'" in m for _, m in misplaced)
