"""profconv: run, check, profile and report CUDA convolution kernels."""

from profconv.parse import ProfileSet, parse, parse_text

__version__ = "0.1.0"

__all__ = ["ProfileSet", "__version__", "parse", "parse_text"]
