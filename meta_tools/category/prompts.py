"""The Jinja2 prompt templates of the category loop, checked when they load."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TypedDict

import jinja2
from jinja2 import meta

from ..exceptions import ConfigError

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
    past_runs: list[dict[str, str]]


VARIABLES = PromptVariables.__required_keys__
_SAMPLE = PromptVariables(
    category="Sample",
    description="A sample category.",
    tool_usage_notes="notes",
    tools=[{"name": "t", "description": "d"}],
    objective="o",
    exact_input="i",
    iteration=1,
    max_iterations=5,
    withdrawn=["t"],
    past_runs=[{"objective": "o", "summary": "s"}],
)


def default_templates_dir() -> Path:
    """The folder of the default templates shipped with the package."""
    # In a checkout this is a link to the top-level `meta_tool_prompts/` (the one source);
    # a built wheel holds the files themselves.
    return Path(str(resources.files(__package__).joinpath("templates")))


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
            ConfigError: a template has a syntax error or uses an unknown variable.
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
        if folder is not None and not folder.is_dir():
            raise ConfigError(str(folder), ["prompts_dir: the folder does not exist"])
        for phase in PHASES:
            path = folder / f"{phase}.j2" if folder is not None else None
            if path is None or not path.is_file():
                path = default_templates_dir() / f"{phase}.j2"
            source = path.read_text(encoding="utf-8")
            try:
                unknown = meta.find_undeclared_variables(env.parse(source)) - VARIABLES
                if unknown:
                    allowed = ", ".join(sorted(VARIABLES))
                    problems.append(
                        f"{path}: unknown variable(s) {', '.join(sorted(unknown))}; available: {allowed}"
                    )
                    continue
                template = env.from_string(source)
                template.render(_SAMPLE)
            except jinja2.TemplateError as exc:
                line = getattr(exc, "lineno", None)
                problems.append(f"{path}{f':{line}' if line else ''}: {exc}")
                continue
            compiled[phase] = template
        if problems:
            raise ConfigError(str(folder or default_templates_dir()), problems)
        return cls(**compiled)
