"""The Jinja2 prompt templates of the category loop, checked when they load."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from itertools import islice
from pathlib import Path
from typing import TypedDict

import jinja2
from jinja2 import meta

from ..exceptions import ConfigError
from ..support.suggest import close_names

__all__ = ["PHASES", "VARIABLES", "PromptSet", "PromptVariables", "default_templates_dir"]

PHASES = ("tool_selection", "tool_result_evaluation", "max_iteration_summary")


class PromptVariables(TypedDict):
    """What every template may use; the keys are the variable names."""

    category: str
    description: str
    tool_usage_notes: str
    tools: list[dict[str, str]]
    objective: str
    exact_input: str
    iteration: int
    max_iterations: int
    withdrawn: list[str]
    failed: list[str]
    has_results: bool
    found_nothing: list[str]
    past_runs: list[dict[str, str]]
    repeated: bool


VARIABLES = PromptVariables.__required_keys__
_SAMPLE = PromptVariables(
    category="Sample",
    description="A sample category.",
    tool_usage_notes="notes",
    tools=[{"name": "t", "description": "d"}],
    repeated=False,
    objective="o",
    exact_input="i",
    iteration=1,
    max_iterations=5,
    withdrawn=["t"],
    failed=["t"],
    has_results=True,
    found_nothing=["t"],
    past_runs=[{"objective": "o", "summary": "s"}],
)
# The other extreme a real call reaches: nothing offered, nothing done, nothing remembered.
_EMPTY_SAMPLE = PromptVariables(
    category="Sample",
    description="",
    tool_usage_notes="",
    tools=[],
    objective="",
    exact_input="",
    iteration=0,
    max_iterations=1,
    withdrawn=[],
    failed=[],
    has_results=False,
    found_nothing=[],
    past_runs=[],
    repeated=True,
)


def default_templates_dir() -> Path:
    """The folder of the default templates shipped with the package."""
    # In a checkout this is a link to the top-level `meta_tool_prompts/` (the one source);
    # a built wheel holds the files themselves.
    return Path(str(resources.files(__package__).joinpath("templates")))


class _TemplateProblem(Exception):
    """One template that cannot be used; the message names the file (and line)."""


def _template_line(exc: BaseException) -> int | None:
    """The template line an error was raised at: Jinja's own, or its traceback's last frame."""
    line = getattr(exc, "lineno", None)
    if isinstance(line, int):
        return line
    tb, found = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            found = tb.tb_lineno
        tb = tb.tb_next
    return found


def _template_path(folder: Path | None, phase: str) -> Path:
    """The user's template for `phase`, or the default when the folder has none.

    A file that is there but not a regular file (a folder, a FIFO that would
    block the read) is a problem, not a reason to fall back silently.
    """
    path = folder / f"{phase}.j2" if folder is not None else None
    try:
        if path is None or not path.exists():
            return default_templates_dir() / f"{phase}.j2"
        if not path.is_file():
            raise _TemplateProblem(f"{path}: not a regular file")
    except OSError as exc:
        raise _TemplateProblem(f"{path}: cannot read the template: {exc.strerror}") from None
    return path


def _compile(env: jinja2.Environment, path: Path) -> jinja2.Template:
    """Read, parse, check and sample-render one template.

    Any failure (unreadable, not UTF-8, bad syntax, an unknown variable, or an
    expression that raises when rendered, like `{{ 1/0 }}`) is a problem of the
    file, found now rather than in the middle of a call.
    """
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise _TemplateProblem(f"{path}: cannot read the template: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise _TemplateProblem(
            f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}"
        ) from None
    try:
        unknown = meta.find_undeclared_variables(env.parse(source)) - VARIABLES
        if unknown:
            allowed = ", ".join(sorted(VARIABLES))
            raise _TemplateProblem(
                f"{path}: unknown variable(s) {', '.join(sorted(unknown))}; available: {allowed}"
            )
        template = env.from_string(source)
        for sample in (_SAMPLE, _EMPTY_SAMPLE):
            template.render(sample)
    except _TemplateProblem:
        raise
    except Exception as exc:  # a template is code: whatever it raises is the file's problem
        line = _template_line(exc)
        what = str(exc) if isinstance(exc, jinja2.TemplateError) else f"{type(exc).__name__}: {exc}"
        raise _TemplateProblem(f"{path}{f':{line}' if line else ''}: {what}") from None
    return template


@dataclass(frozen=True)
class PromptSet:
    """The three compiled templates."""

    tool_selection: jinja2.Template
    tool_result_evaluation: jinja2.Template
    max_iteration_summary: jinja2.Template

    @classmethod
    def load(cls, folder: Path | None = None) -> PromptSet:
        """Load templates from `folder`, falling back to the defaults for missing files.

        Raises:
            ConfigError: a template cannot be read, has a syntax error, uses an unknown
                variable or raises when rendered.
        """
        env = jinja2.Environment(
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        compiled: dict[str, jinja2.Template] = {}
        problems: list[str] = []
        try:
            if folder is not None and not folder.is_dir():
                raise ConfigError(str(folder), [_missing_folder(folder)])
        except OSError as exc:  # e.g. a name too long for the file system
            raise ConfigError(str(folder), [f"prompts_dir: {exc.strerror}"]) from None
        for phase in PHASES:
            try:
                compiled[phase] = _compile(env, _template_path(folder, phase))
            except _TemplateProblem as problem:
                problems.append(str(problem))
        if problems:
            raise ConfigError(str(folder or default_templates_dir()), problems)
        return cls(**compiled)


def _missing_folder(folder: Path) -> str:
    """`prompts_dir` names no folder: say which path it resolved to, and a close folder name."""
    try:
        beside = [p.name for p in islice(folder.parent.iterdir(), 1000) if p.is_dir()]
    except OSError:  # its parent is missing too
        beside = []
    close = close_names(folder.name, beside, n=1)
    hint = f"; did you mean {close[0]!r} (a folder beside it)?" if close else ""
    return f"prompts_dir: the folder {str(folder)!r} does not exist{hint}"
