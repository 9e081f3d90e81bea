"""Grouping tools into categories: proposals (`by_server`, `by_topic`) and the grouping check.

features     tools as TF-IDF rows (the shortlist's words)
cluster      size-bounded agglomerative merging of units (a server's tools stay together)
propose      by_server / by_topic
name         names, descriptions and notes from the tools' own words
model_names  the same, written by a model in a few bounded calls
check        what a main agent may confuse, misplaced tools, sizes, empty descriptions
"""

from .check import CategoryView, Finding, check_grouping
from .name import Draft, draft_from_words, unique_names
from .propose import Grouping, by_server, by_topic

__all__ = [
    "CategoryView",
    "Draft",
    "Finding",
    "Grouping",
    "by_server",
    "by_topic",
    "check_grouping",
    "draft_from_words",
    "unique_names",
]
