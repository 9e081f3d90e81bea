"""Demo tools, dates group: time zones, date arithmetic and calendars (never "now": same input, same output)."""

from __future__ import annotations

import calendar
import datetime as dt
import difflib
import functools
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = [
    "convert_time_zone",
    "date_difference",
    "describe_date",
    "month_calendar",
    "shift_date",
]

_WEEKDAYS = list(calendar.day_name)


@functools.lru_cache(maxsize=1)
def _zones() -> dict[str, str]:
    """Every IANA zone by lowercase name and by lowercase city ("paris" -> Europe/Paris)."""
    names = sorted(available_timezones())
    index = {name.lower(): name for name in names}
    cities: dict[str, list[str]] = {}
    for name in names:
        city = name.rsplit("/", 1)[-1].replace("_", " ").lower()
        cities.setdefault(city, []).append(name)
    for city, matches in cities.items():
        if len(matches) == 1:
            index.setdefault(city, matches[0])
    return index


def _zone(name: str) -> ZoneInfo:
    key = " ".join(name.strip().replace("_", " ").split()).lower()
    if key in ("utc", "z", "gmt"):
        return ZoneInfo("UTC")
    found = _zones().get(key) or _zones().get(key.replace(" ", "_"))
    if found is None:
        close = difflib.get_close_matches(key, list(_zones()), n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(repr(_zones()[c]) for c in close)}?" if close else ""
        raise ToolError(
            f"unknown time zone {name!r}.{hint} Use an IANA name like 'Europe/Paris',"
            " 'America/New_York' or 'Asia/Shanghai' (a unique city name also works)."
        )
    try:
        return ZoneInfo(found)
    except ZoneInfoNotFoundError:  # pragma: no cover - listed but unreadable tz database entry
        raise ToolError(f"time zone {found!r} is listed but its data cannot be read") from None


def _parse_datetime(text: str, what: str) -> dt.datetime:
    value = text.strip().replace("Z", "+00:00").replace("z", "+00:00")
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        raise ToolError(
            f"{what} {text!r} is not an ISO date-time; use 'YYYY-MM-DD HH:MM' or"
            " 'YYYY-MM-DDTHH:MM:SS', optionally with an offset like '+02:00'"
        ) from None


def _parse_date(text: str, what: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise ToolError(f"{what} {text!r} is not an ISO date; use 'YYYY-MM-DD'") from None


def convert_time_zone(
    time: Annotated[
        str,
        Field(
            description="Local date-time, e.g. '2025-03-30 14:30' (an offset wins over from_zone)."
        ),
    ],
    from_zone: Annotated[str, Field(description="Zone of the given time, e.g. 'Europe/Paris'.")],
    to_zone: Annotated[str, Field(description="Zone to convert to, e.g. 'Asia/Tokyo'.")],
) -> dict[str, Any]:
    """Convert a date-time from one time zone to another, with offsets, abbreviations and DST notes."""
    moment = _parse_datetime(time, "time")
    source, target = _zone(from_zone), _zone(to_zone)
    notes: list[str] = []
    if moment.tzinfo is None:
        first, second = moment.replace(tzinfo=source), moment.replace(tzinfo=source, fold=1)
        roundtrip = first.astimezone(dt.timezone.utc).astimezone(source).replace(tzinfo=None)
        if roundtrip != moment:
            notes.append(
                "the local time does not exist (clocks go forward);"
                f" it was read as {roundtrip.isoformat(sep=' ')}"
            )
        elif first.utcoffset() != second.utcoffset():
            notes.append("the local time occurs twice (clocks go back); the first one was used")
        moment = first
    converted = moment.astimezone(target)
    return {
        "input": time,
        "from": {
            "zone": str(source) if moment.tzinfo is source else moment.tzname(),
            "datetime": moment.isoformat(sep=" "),
            "utc_offset": _offset(moment),
            "abbreviation": moment.tzname(),
        },
        "to": {
            "zone": str(target),
            "datetime": converted.isoformat(sep=" "),
            "utc_offset": _offset(converted),
            "abbreviation": converted.tzname(),
            "weekday": _WEEKDAYS[converted.weekday()],
        },
        "utc": moment.astimezone(dt.timezone.utc).isoformat(sep=" "),
        "notes": notes,
    }


def _offset(moment: dt.datetime) -> str:
    delta = moment.utcoffset() or dt.timedelta(0)
    sign = "-" if delta < dt.timedelta(0) else "+"
    minutes = abs(int(delta.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _months_between(start: dt.date, end: dt.date) -> tuple[int, int, int]:
    """Whole years, months and days from start to end (end >= start), like a calendar count."""
    months = (end.year - start.year) * 12 + end.month - start.month
    if end.day < start.day:
        months -= 1
    anchor = _add_months(start, months)[0]
    return months // 12, months % 12, (end - anchor).days


def _add_months(day: dt.date, months: int) -> tuple[dt.date, bool]:
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise ToolError("the resulting date is outside the years 1 to 9999")
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last)), day.day > last


def _business_days(start: dt.date, end: dt.date) -> int:
    """Monday-to-Friday days in [start, end), negative when end is before start."""
    if end < start:
        return -_business_days(end, start)
    weeks, extra = divmod((end - start).days, 7)
    count = weeks * 5
    for offset in range(extra):
        if (start + dt.timedelta(days=weeks * 7 + offset)).weekday() < 5:
            count += 1
    return count


def date_difference(
    start: Annotated[str, Field(description="First date, 'YYYY-MM-DD' (a time part is allowed).")],
    end: Annotated[str, Field(description="Second date, 'YYYY-MM-DD' (a time part is allowed).")],
) -> dict[str, Any]:
    """Count the days, weeks, business days and calendar years/months/days between two dates."""
    first, second = _parse_datetime(start, "start"), _parse_datetime(end, "end")
    if (first.tzinfo is None) != (second.tzinfo is None):
        raise ToolError("give both dates with an offset, or neither")
    delta = second - first
    low, high = sorted((first.date(), second.date()))
    years, months, days = _months_between(low, high)
    sign = -1 if second < first else 1
    return {
        "start": start,
        "end": end,
        "days": delta.days if delta >= dt.timedelta(0) else -((-delta).days),
        "total_hours": round(delta.total_seconds() / 3600, 4),
        "weeks": {"weeks": abs(delta.days) // 7 * sign, "days": abs(delta.days) % 7 * sign},
        "calendar": {"years": years * sign, "months": months * sign, "days": days * sign},
        "business_days": _business_days(first.date(), second.date()),
    }


def shift_date(
    date: Annotated[str, Field(description="Start date, 'YYYY-MM-DD'.")],
    years: Annotated[int, Field(description="Years to add (negative to subtract).")] = 0,
    months: Annotated[int, Field(description="Months to add (negative to subtract).")] = 0,
    weeks: Annotated[int, Field(description="Weeks to add (negative to subtract).")] = 0,
    days: Annotated[int, Field(description="Days to add (negative to subtract).")] = 0,
    business_days: Annotated[
        int, Field(description="Monday-to-Friday days to add after the rest (negative to go back).")
    ] = 0,
) -> dict[str, Any]:
    """Add or subtract years, months, weeks, days and business days to a date."""
    day = _parse_date(date, "date")
    notes: list[str] = []
    shifted, clamped = _add_months(day, years * 12 + months)
    if clamped:
        notes.append(f"day {day.day} does not exist in that month; the month's last day was used")
    try:
        shifted += dt.timedelta(weeks=weeks, days=days)
        step = 1 if business_days >= 0 else -1
        remaining = abs(business_days)
        if remaining > 100_000:
            raise ToolError("business_days must be between -100000 and 100000")
        while remaining:
            shifted += dt.timedelta(days=step)
            if shifted.weekday() < 5:
                remaining -= 1
    except OverflowError:
        raise ToolError("the resulting date is outside the years 1 to 9999") from None
    return {
        "start": day.isoformat(),
        "result": shifted.isoformat(),
        "weekday": _WEEKDAYS[shifted.weekday()],
        "notes": notes,
    }


def describe_date(
    date: Annotated[str, Field(description="The date, 'YYYY-MM-DD'.")],
) -> dict[str, Any]:
    """Describe a date: weekday, ISO week, day of the year, quarter, leap year and month length."""
    day = _parse_date(date, "date")
    iso = day.isocalendar()
    days_in_year = 366 if calendar.isleap(day.year) else 365
    day_of_year = day.timetuple().tm_yday
    return {
        "date": day.isoformat(),
        "weekday": _WEEKDAYS[day.weekday()],
        "iso_year": iso[0],
        "iso_week": iso[1],
        "day_of_year": day_of_year,
        "days_left_in_year": days_in_year - day_of_year,
        "quarter": (day.month - 1) // 3 + 1,
        "is_leap_year": calendar.isleap(day.year),
        "days_in_month": calendar.monthrange(day.year, day.month)[1],
    }


def month_calendar(
    year: Annotated[int, Field(description="The year, 1 to 9999.", ge=1, le=9999)],
    month: Annotated[int, Field(description="The month, 1 to 12.", ge=1, le=12)],
    week_starts_on: Annotated[
        str, Field(description="'monday' (ISO) or 'sunday' (US).")
    ] = "monday",
) -> dict[str, Any]:
    """Show one month as a calendar grid, with its weeks as lists of day numbers."""
    start = week_starts_on.strip().lower()
    if start not in ("monday", "sunday"):
        raise ToolError(f"week_starts_on must be 'monday' or 'sunday', got {week_starts_on!r}")
    first_weekday = calendar.MONDAY if start == "monday" else calendar.SUNDAY
    grid = calendar.TextCalendar(first_weekday)
    weeks = [[day or None for day in week] for week in grid.monthdayscalendar(year, month)]
    return {
        "year": year,
        "month": calendar.month_name[month],
        "text": grid.formatmonth(year, month).rstrip("\n"),
        "weekday_names": [_WEEKDAYS[(first_weekday + i) % 7] for i in range(7)],
        "weeks": weeks,
    }
