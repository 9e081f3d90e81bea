"""The main agent: a small agent loop whose only tools are a router's category tools.

`main` holds the loop (`MainAgent`), `checks` what its guards read of the model's
replies and calls, `routing` where a call written in another shape goes, and
`steps` what it reports while it answers.
"""

from .main import MainAgent
from .offer import INSTRUCTIONS
from .steps import AgentStep, CategoryCalled, CategoryReturned, StepSink

__all__ = [
    "INSTRUCTIONS",
    "AgentStep",
    "CategoryCalled",
    "CategoryReturned",
    "MainAgent",
    "StepSink",
]
