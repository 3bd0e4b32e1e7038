"""The calls profconv.profile.cupti_collector makes, recording nothing; activity_flush_all takes TAIL_S."""

import enum
import time

TAIL_S = 2.0


class ActivityKind(enum.IntEnum):
    RUNTIME = 1
    DRIVER = 2
    CONCURRENT_KERNEL = 3
    MEMCPY = 4
    MEMSET = 5
    MARKER = 6


class CallbackDomain(enum.IntEnum):
    RUNTIME_API = 1
    DRIVER_API = 2


class ActivityObjectKind(enum.IntEnum):
    THREAD = 1


def activity_register_callbacks(request, complete) -> None:
    pass


def activity_enable(kind) -> None:
    pass


def activity_disable(kind) -> None:
    pass


def activity_flush_all(flag) -> None:
    time.sleep(TAIL_S)


def get_callback_name(domain, cbid) -> str:
    if cbid > 3:
        raise ValueError("CUPTI_ERROR_INVALID_PARAMETER")
    return ("cudaGetDevice_v3020", "cudaLaunchKernel_v7000", "cuMemcpyHtoD_v2")[cbid - 1]


def activity_enable_runtime_api(cbid, enable) -> None:
    pass


def activity_enable_driver_api(cbid, enable) -> None:
    pass
