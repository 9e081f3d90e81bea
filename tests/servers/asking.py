"""A small MCP server whose tools ask during a call: the user (elicitation), the model, progress.

python -m tests.servers.asking   # stdio
"""

from __future__ import annotations

import warnings
from typing import Annotated, Any

import anyio
from mcp import MCPDeprecationWarning
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent
from pydantic import BaseModel, Field


class Party(BaseModel):
    people: int = Field(description="How many people")
    time: str = Field(default="19:00", description="When")


class Profile(BaseModel):
    """The conformance suite's SEP-1034 form: every field optional, with a default."""

    name: str = "John Doe"
    age: int = 30
    score: float = 95.5
    status: str = Field(default="active", json_schema_extra={"enum": ["active", "inactive"]})
    verified: bool = True


def ask_party(city: str) -> Elicit[Party]:
    return Elicit(f"How many people, and when, for the table in {city}?", Party)


def ask_profile() -> Elicit[Profile]:
    return Elicit("Accept with defaults", Profile)


def ask_model(topic: str) -> Sample:
    message = SamplingMessage(role="user", content=TextContent(text=f"One word about {topic}"))
    return Sample([message], max_tokens=16)


def build() -> MCPServer:
    server: MCPServer = MCPServer("asking", log_level="WARNING")

    @server.tool()
    def book_table(
        city: str, party: Annotated[ElicitationResult[Party], Resolve(ask_party)]
    ) -> str:
        """Book a table; asks the user how many people and when."""
        if isinstance(party, AcceptedElicitation):
            return f"booked in {city} for {party.data.people} at {party.data.time}"
        return f"not booked: the user answered {party.action}"

    @server.tool()
    def profile(
        answer: Annotated[ElicitationResult[Profile], Resolve(ask_profile)],
    ) -> dict[str, Any]:
        """Ask for a profile whose fields all have defaults; return what came back."""
        if isinstance(answer, AcceptedElicitation):
            return answer.data.model_dump()
        return {"action": answer.action}

    @server.tool()
    def one_word(topic: str, said: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
        """Ask the client's model for one word about a topic."""
        content = said.content
        return content.text if isinstance(content, TextContent) else "?"

    @server.tool()
    async def count(steps: int, ctx: Context) -> str:
        """Count up, reporting each step as progress."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted to {steps}"

    @server.tool()
    async def noisy(ctx: Context) -> str:
        """Log a line while working."""
        with warnings.catch_warnings():  # deprecated in 2026-07-28, still sent
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await ctx.log("info", "warming up")
        return "warm"

    released = anyio.Event()

    @server.tool()
    async def hold() -> str:
        """Wait until `release` is called."""
        await released.wait()
        return "released"

    @server.tool()
    def release() -> str:
        """End the wait of `hold`."""
        released.set()
        return "ok"

    return server


if __name__ == "__main__":
    build().run("stdio")
