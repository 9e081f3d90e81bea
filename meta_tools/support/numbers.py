"""Numbers as people write them: the one reader behind every check that compares numbers.

`1,234.56`, `1.234,56` and `1 234,56` are one amount; `848,55` is 848.55 in German
and may be a list `848, 55` elsewhere; `3.5kg` is 3.5; `$4.82 million` and `4.2M`
are scaled; `mp3`, `utf-8` and `dna2protein` hold no number. A written number has
every value it may mean (`candidates`): checks that ask "is this number given?"
accept any of them, so that no reading a person would make is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["WrittenNumber", "count_words", "is_held", "number_values", "read_numbers"]

_NUMBER = re.compile(
    # Not part of a name: no letter, digit or `_` before it, nor a letter and `-` (utf-8).
    r"(?<![\w.,])(?<![^\W\d_]-)"
    r"(?P<number>\d{1,3}(?:(?P<sep>[,.'\u00a0\u202f])\d{3})+(?:(?!(?P=sep))[.,]\d+)?"
    r"|\d+(?:[.,]\d+)?)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|mio|mrd|bn|k|m|b)(?![^\W\d_]))?",
    re.IGNORECASE,
)
_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mio": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "mrd": 1e9,
    "trillion": 1e12,
}
_NUMBER_WORDS = dict(
    zip(
        "zero one two three four five six seven eight nine ten eleven twelve".split(),  # noqa: SIM905
        range(13),
        strict=True,
    )
) | {"twenty": 20, "thirty": 30, "hundred": 100, "thousand": 1000, "dozen": 12}
_WORD = re.compile(r"[^\W\d_]+")
#: Scripts written without spaces: each character counts as a word.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")


@dataclass(frozen=True, slots=True)
class WrittenNumber:
    """A number as written, every value it may mean, and its decimal places."""

    text: str
    candidates: frozenset[float]
    places: int


def read_numbers(text: str) -> list[WrittenNumber]:
    """The numbers `text` writes in digits, each with the values it may mean."""
    return [_written(match) for match in _NUMBER.finditer(text)]


def _written(match: re.Match[str]) -> WrittenNumber:
    digits, sep = match["number"], match["sep"]
    values: set[float] = set()
    places = 0
    if sep is not None:
        head, decimal_mark, tail = _split_decimal(digits, sep)
        whole = float(head.replace(sep, "") + (f".{tail}" if decimal_mark else ""))
        values.add(whole)
        places = len(tail) if decimal_mark else 0
        if sep in ",." and not decimal_mark and digits.count(sep) == 1:
            values.add(float(digits.replace(sep, ".")))  # `1,234` may be 1.234 (a decimal comma)
        if sep == ",":
            values.update(float(part) for part in re.split(r"[,.]", digits) if part)  # a list
    elif "," in digits:
        values.add(float(digits.replace(",", ".")))  # `848,55`: a decimal comma
        values.update(float(part) for part in digits.split(","))  # or a list `848, 55`
        places = len(digits.partition(",")[2])
    else:
        values.add(float(digits))
        places = len(digits.partition(".")[2])
    scale = match["scale"]
    if scale is not None:
        factor = _SCALES[scale.lower()]
        values |= {value * factor for value in values}
    return WrittenNumber(match.group(), frozenset(values), places)


def _split_decimal(digits: str, sep: str) -> tuple[str, str, str]:
    """A grouped number split at its decimal mark (the other one of `.` and `,`)."""
    mark = "," if sep == "." else "."
    head, found, tail = digits.rpartition(mark)
    return (head, found, tail) if found else (digits, "", "")


def number_values(text: str) -> frozenset[float]:
    """Every value the numbers of `text` may mean, and the small ones it writes in words."""
    values = {value for written in read_numbers(text) for value in written.candidates}
    words = _WORD.findall(text.casefold())
    return frozenset(values | {_NUMBER_WORDS[w] for w in words if w in _NUMBER_WORDS})


def is_held(number: WrittenNumber, values: frozenset[float] | set[float]) -> bool:
    """Whether `number` is one of `values` at its own precision, or as a percentage
    (`3.33` for 3.3333, `25` for 0.25, `15` for 0.15)."""
    for target in number.candidates:
        for value in values:
            if round(value, number.places) == target or round(value * 100, number.places) == target:
                return True
            if abs(value - target) < 1e-9 or abs(value * 100 - target) < 1e-6:
                return True
    return False


def count_words(text: str) -> int:
    """The words of `text`: runs of letters, and each character of a script written
    without spaces (Chinese, Japanese, Korean, Thai)."""
    return sum(
        len(_UNSPACED.findall(word)) or 1 if _UNSPACED.search(word) else 1
        for word in _WORD.findall(text)
    )
