"""Tests of the model layer, `meta_tools.llm`."""
