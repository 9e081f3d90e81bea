"""Public tool catalogs and query sets (`../shared/data` layout) as meta-tools objects."""

from __future__ import annotations

import json
import math
import random
import re
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from meta_tools.tools.base import BaseTool, ToolParameter

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def function_name(text: str, limit: int = 64) -> str:
    """Any label as a valid function name: `OTT details` -> `OTT_details`."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", text).strip("_")
    return slug[:limit] or "tool"


def _type_of(schema: dict[str, Any]) -> str:
    declared = schema.get("type")
    if isinstance(declared, str):
        return declared
    if isinstance(declared, list):
        return next((t for t in declared if t != "null"), "string")
    return "string"


class CatalogTool(BaseTool):
    """A catalog entry as a tool (its schema as listed; calling it returns a fixed text)."""

    def __init__(self, entry: dict[str, Any], name: str) -> None:
        self.entry = entry
        self._name = name
        self._description = entry.get("description") or ""

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @cached_property
    def args(self) -> dict[str, ToolParameter]:
        schema = self.entry.get("input_schema") or {}
        required = set(schema.get("required") or [])
        out: dict[str, ToolParameter] = {}
        for key, prop in (schema.get("properties") or {}).items():
            prop = prop if isinstance(prop, dict) else {}
            out[key] = ToolParameter(
                name=key,
                type=_type_of(prop),
                description=str(prop.get("description") or ""),
                required=key in required,
                json_schema=prop,
            )
        return out

    @property
    def is_async(self) -> bool:
        return True

    async def async_execute(self, *args: Any, **kwargs: Any) -> Any:
        return f"{self.name} ran"


@dataclass
class Catalog:
    """Tools of one data set, grouped by category, with qualified unique names."""

    name: str
    tools: list[CatalogTool]
    by_id: dict[str, CatalogTool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_id = {t.entry["id"]: t for t in self.tools}

    @property
    def categories(self) -> dict[str, list[CatalogTool]]:
        grouped: dict[str, list[CatalogTool]] = defaultdict(list)
        for t in self.tools:
            grouped[t.entry.get("category") or "all"].append(t)
        return dict(grouped)


def load_catalog(data: Path, dataset: str) -> Catalog:
    """Read `<data>/<dataset>/catalog.jsonl` as tools with unique names (`catalog_tools`)."""
    entries = [json.loads(line) for line in (data / dataset / "catalog.jsonl").open()]
    return Catalog(dataset, catalog_tools(entries))


def catalog_tools(entries: list[dict[str, Any]]) -> list[CatalogTool]:
    """Catalog entries as tools; names get a per-group prefix when they repeat.

    Every tool is reachable: `server__tool` (as a per-server MCP prefix does) for
    tools with a group, and a numbered suffix if a name still collides.
    """
    tools: list[CatalogTool] = []
    taken: set[str] = set()
    for entry in entries:
        group = entry.get("group")
        base = entry["name"] if not group else f"{function_name(group, 24)}__{entry['name']}"
        name = function_name(base)
        candidate, number = name, 2
        while candidate in taken:
            suffix = f"_{number}"
            candidate, number = name[: 64 - len(suffix)] + suffix, number + 1
        taken.add(candidate)
        tools.append(CatalogTool(entry, candidate))
    return tools


def load_queries(data: Path, dataset: str) -> list[dict[str, Any]]:
    path = data / dataset / "queries.jsonl"
    return [json.loads(line) for line in path.open()] if path.exists() else []


SPLITS = Path(__file__).resolve().parent / "splits"
"""The committed query splits (`splits/<dataset>.json`: ids only, with how they were made)."""

Part = Literal["tune", "test", "all"]
PARTS: tuple[Part, ...] = ("tune", "test", "all")


def make_split(
    queries: Sequence[dict[str, Any]],
    *,
    seed: int,
    seen: Collection[str] = (),
    test_share: float = 1 / 3,
) -> dict[str, list[str]]:
    """Query ids in a tuning part and a test part, drawn once with `seed`.

    Each subset gives `ceil(test_share * its size)` queries to the test part, drawn
    only from queries not in `seen` (those some change was already tried on), so that
    the test part is held out in fact; every other query is tuning. Both parts keep
    the file order.

    Raises:
        ValueError: a subset has fewer unseen queries than its test share.
    """
    by_subset: dict[str, list[str]] = defaultdict(list)
    for query in queries:
        by_subset[str(query.get("subset") or query["qid"].split(":")[0])].append(query["qid"])
    rng = random.Random(seed)
    test: set[str] = set()
    short = []
    for subset in sorted(by_subset):
        ids = by_subset[subset]
        fresh = [i for i in ids if i not in seen]
        wanted = math.ceil(test_share * len(ids))
        if wanted > len(fresh):
            short.append(f"{subset!r} has {len(fresh)} unseen of the {wanted} test queries")
            continue
        test.update(rng.sample(fresh, wanted))
    if short:
        raise ValueError("cannot split: " + "; ".join(short))
    order = [q["qid"] for q in queries]
    return {"tune": [i for i in order if i not in test], "test": [i for i in order if i in test]}


def load_split(dataset: str = "stabletoolbench", *, folder: Path = SPLITS) -> dict[str, Any]:
    """The committed split of `dataset` (`tune`, `test`, `seed`, `how`)."""
    found: dict[str, Any] = json.loads((folder / f"{dataset}.json").read_text())
    return found


def split_queries(
    queries: Sequence[dict[str, Any]], part: Part, split: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The queries of one part of `split` (default: the committed StableToolBench split),
    in file order; `all` keeps every query, and so does a query file the split knows
    none of (another data set, a test's few queries: `split_known` says which).

    Raises:
        ValueError: some queries are in neither part (the data changed since the split
            was made).
    """
    split = split if split is not None else load_split()
    if part == "all" or not split_known(queries, split):
        return list(queries)
    known = set(split["tune"]) | set(split["test"])
    unknown = [q["qid"] for q in queries if q["qid"] not in known]
    if unknown:
        raise ValueError(
            f"{len(unknown)} queries are in no part of the split (first: {unknown[0]!r});"
            " the query file changed since the split was made"
        )
    wanted = set(split[part])
    return [q for q in queries if q["qid"] in wanted]


def split_known(queries: Sequence[dict[str, Any]], split: dict[str, Any] | None = None) -> bool:
    """Whether `split` (default: the committed one) was made from these queries: it knows
    one of them at least."""
    split = split if split is not None else load_split()
    known = set(split["tune"]) | set(split["test"])
    return any(q["qid"] in known for q in queries)
