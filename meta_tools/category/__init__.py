"""Level 2: one category's bounded select → execute → evaluate → summarize loop."""

from .manager import CategoryManager
from .result import CategoryResult, Execution, RunUsage

__all__ = ["CategoryManager", "CategoryResult", "Execution", "RunUsage"]
