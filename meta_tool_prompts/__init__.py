"""The default prompt templates of meta-tools (Jinja2), shipped with the package."""
