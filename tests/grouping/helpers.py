"""Tools with given names, descriptions and parameters, for grouping tests."""

from typing import Any

from meta_tools.tools.base import BaseTool
from meta_tools.tools.function import FunctionTool


def sample_tool(name: str, description: str, *params: str) -> BaseTool:
    """A tool that does nothing, with string parameters `params`."""

    def run(**kwargs: Any) -> str:
        return name

    return FunctionTool(
        name,
        run,
        description=description,
        args={p: {"type": "string", "description": p} for p in params},
    )


WEATHER = [
    sample_tool("get_forecast", "Weather forecast for a city: rain, wind and temperature.", "city"),
    sample_tool("get_rain_radar", "Rain radar and precipitation map of a city.", "city"),
    sample_tool(
        "air_quality", "Air quality and pollution index of a city, like the weather.", "city"
    ),
    sample_tool(
        "sunrise_times", "Sunrise and sunset times of a city for weather planning.", "city"
    ),
]
MUSIC = [
    sample_tool("search_songs", "Search songs by title or artist in the music catalog.", "query"),
    sample_tool("artist_albums", "Albums of a music artist, newest first.", "artist"),
    sample_tool("song_lyrics", "Lyrics of a song by its title and artist.", "title", "artist"),
    sample_tool("top_charts", "Top music charts: the most played songs this week.", "country"),
]
