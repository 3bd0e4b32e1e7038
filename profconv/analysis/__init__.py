"""Analysis stage: canonical frames in, derived frames out (no I/O, no rendering)."""
