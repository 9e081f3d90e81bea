"""Benchmarks of meta-tools: context size, router overhead, parallelism, MCP latency, shortlist recall."""
