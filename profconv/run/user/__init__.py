"""Kernels described by a declaration (a kernel file plus a TOML manifest): the user's and ours.

manifest: the declaration format, contract detection, launch expressions (pure, no GPU).
contracts: a declaration turned into a runnable `Variant` (NVRTC, nvcc + ctypes, the course shims, Python).
worker / isolate: a user's kernel checked and timed in a child process with a time limit.
checks: correctness for code we did not write (edge shapes, seeds, inputs unchanged, re-checks, floor).
scaffold: `profconv kernel new`: a correct starting kernel for each contract.
"""
