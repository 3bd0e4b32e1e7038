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
    return "cudaFake"
