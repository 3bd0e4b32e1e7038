"""Reporting stage: run records and profiler logs in, the hand-in report out (terminal, markdown, plots)."""
