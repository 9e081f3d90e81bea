"""Arguments checked against a server's whole input schema, in the draft it declares.

The category model may get a rewritten schema (`offered_schema`); what is sent
to the server is still checked against the server's own, so an `anyOf`, an
`if`/`then`/`else` or a nested constraint said only in words is enforced before
the call, with every problem listed for the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema  # type: ignore[import-untyped,unused-ignore]
import jsonschema.validators  # type: ignore[import-untyped,unused-ignore]
from referencing.exceptions import Unresolvable

from ...support.text import clipped

__all__ = ["SchemaCheck"]

_MAX_PROBLEMS = 10
_MAX_MESSAGE_CHARS = 200


class SchemaCheck:
    """The validator of one input schema; a schema that is not valid JSON schema checks nothing
    (the server still validates), and says why in `unusable`."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.unusable: str | None = None
        self._validator: Any = None
        try:
            kind = jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
        except jsonschema.SchemaError as exc:
            self.unusable = (
                f"the input schema is not valid JSON schema: {clipped(exc.message, 120)}"
            )
            return
        self._validator = kind(schema)

    def problems(self, arguments: Mapping[str, Any]) -> list[str]:
        """Every way `arguments` break the schema (at most 10), each naming where."""
        if self._validator is None:
            return []
        try:
            errors = sorted(
                self._validator.iter_errors(dict(arguments)),
                key=lambda e: [str(p) for p in e.absolute_path],
            )
        except Unresolvable:  # a `$ref` to another document: the server checks it
            return []
        problems: list[str] = []
        for error in errors[:_MAX_PROBLEMS]:
            where = ".".join(str(p) for p in error.absolute_path) or "arguments"
            problems.append(f"{where!r}: {clipped(error.message, _MAX_MESSAGE_CHARS)}")
        return problems
