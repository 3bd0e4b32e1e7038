import pytest


def _has_gpu() -> bool:
    from profconv.run.gpu import cupy_or_none

    return cupy_or_none() is not None


def pytest_collection_modifyitems(config, items):
    if _has_gpu():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
