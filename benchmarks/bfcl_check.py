"""BFCL's own AST checker, called as a library on the calls one side made.

The calls come in with BFCL's function names already mapped back (our tools are
offered under valid, unique names), so the checker is told a model whose names
BFCL leaves as they are: `CHECKER_MODEL` picks that behaviour only, nothing else.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .bfcl_data import Entry

__all__ = ["CHECKER_MODEL", "Verdict", "check", "checker_version"]

CHECKER_MODEL = "Qwen/Qwen3-1.7B-FC"
"""A model entry of BFCL whose function names keep their dots (`underscore_to_dot` off)."""


@dataclass(frozen=True)
class Verdict:
    """Whether BFCL's checker accepts the calls, and its error when it does not."""

    valid: bool
    error: str | None = None
    kind: str | None = None
    """BFCL's `error_type` (`simple_function_checker:wrong_func_name`, ...)."""


def checker_version() -> str:
    """The installed bfcl-eval's version ("" when it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bfcl-eval")
    except PackageNotFoundError:
        return ""


def check(entry: Entry, calls: Sequence[tuple[str, Any]]) -> Verdict:
    """Score `calls` (BFCL's names, the model's arguments) against `entry`.

    An irrelevance entry is right when no call was made; any other entry is judged
    by BFCL's `ast_checker` exactly as BFCL judges a decoded FC reply.

    Raises:
        SystemExit: `bfcl-eval` is not installed (the `bfcl` extra).
    """
    if entry.irrelevance:
        if not calls:
            return Verdict(True)
        return Verdict(False, f"called {[name for name, _ in calls]} (no function fits)",
                       "irrelevance_error:decoder_success")  # fmt: skip
    if not calls:
        return Verdict(False, "no function was called", "ast_decoder:empty")
    if any(not isinstance(arguments, dict) for _, arguments in calls):
        return Verdict(False, "arguments are not a JSON object", "ast_decoder:decoder_failed")
    try:
        from bfcl_eval.constants.enums import Language  # type: ignore[import-not-found, unused-ignore]
        from bfcl_eval.eval_checker.ast_eval.ast_checker import (  # type: ignore[import-not-found, unused-ignore]
            ast_checker,
        )
    except ImportError as exc:
        raise SystemExit(
            f"BFCL's checker comes from the bfcl-eval package ({exc}); install the extra:"
            " pip install -e '.[bfcl]'"
        ) from None
    decoded = [{name: copy.deepcopy(arguments)} for name, arguments in calls]
    try:
        result = ast_checker(
            copy.deepcopy(list(entry.functions)),
            decoded,
            copy.deepcopy(list(entry.answer or ())),
            Language.PYTHON,
            entry.category,
            CHECKER_MODEL,
        )
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        # An argument of a shape the checker never expected (BFCL would count it wrong too).
        return Verdict(False, f"BFCL's checker raised {type(exc).__name__}: {exc}", "checker")
    if result["valid"]:
        return Verdict(True)
    error = result.get("error")
    text = "; ".join(map(str, error)) if isinstance(error, list) else str(error)
    return Verdict(False, text[:500], result.get("error_type"))
