"""Readable kernel names: Itanium C++ ABI names (`_ZN7cutlass…`) demangled, then folded.

Demangling uses the C++ runtime's own `__cxa_demangle` (libstdc++ or libc++, through ctypes); where
neither can be loaded the mangled name is kept (never a guess)."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

from profconv.parse.names import short_name


@functools.cache
def _demangler():
    for lib in (ctypes.util.find_library("stdc++"), "libstdc++.so.6", ctypes.util.find_library("c++"),
                "libc++.1.dylib"):
        if not lib:
            continue
        try:
            cxx = ctypes.CDLL(lib)
            fn = cxx.__cxa_demangle
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_int)]
        free = ctypes.CDLL(None).free
        free.argtypes = [ctypes.c_void_p]
        return fn, free
    return None


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """'_ZN7cutlass7Kernel2I…EEvNT_6ParamsE' -> 'void cutlass::Kernel2<…>(…::Params)'; other names unchanged."""
    if not name.startswith("_Z") or len(name) > 8192:
        return name
    d = _demangler()
    if d is None:
        return name
    fn, free = d
    status = ctypes.c_int()
    ptr = fn(name.encode(), None, None, ctypes.byref(status))
    if not ptr:
        return name
    try:
        return ctypes.string_at(ptr).decode(errors="replace") if status.value == 0 else name
    finally:
        free(ptr)


def readable(name: str) -> str:
    """The name a report shows: demangled and folded ('cutlass::Kernel2<…>')."""
    return short_name(demangle(name))
