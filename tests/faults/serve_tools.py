"""Python tools for `meta-tools serve --tools tests.faults.serve_tools` in the fault matrix.

tests/cli/test_app.py copies this file into its working folders as `cli_sample_tools`.
"""

from meta_tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()
