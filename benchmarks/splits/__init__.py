"""Committed query splits: `stabletoolbench.json` (made by `python -m benchmarks.splits.make`)."""
