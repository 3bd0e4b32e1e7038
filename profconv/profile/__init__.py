"""Profiling stage: CUPTI activity records and external profilers (ncu, nsys, nvprof) into canonical rows."""
