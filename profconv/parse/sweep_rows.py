"""The rows' finish the columnar sweep readers share (dialects/nvprof/csv_sweep.py: nvprof --csv,
dialects/nsys_csv_sweep.py: nsys CSV summaries, dialects/nvprof/text_columns.py: summary-only
nvprof text): the columns the core adds to a sweep's plain rows, computed once over all of them --
shares ranked per block (core._rows / shares.ranked: each block of rows one ranked table, by
`_kahan.rank_blocks`), names and short names from a pool of distinct names (`_summarycells.nvprof_take`)
-- and the Rows in the schema's column order. The readers call it only where the C modules are built."""

from __future__ import annotations

from array import array
from math import nan
from typing import Any

import numpy as np

from profconv.parse import native
from profconv.parse.colviews import Coded, Const, Runs


def ranked_names(cols: dict[str, Any], blocks: Any, pool: list[str], codes: Any,
                 groups: tuple[Any, bytes, Any] | None = None, unranked: bytes | None = None,
                 views: bool = False) -> dict[str, Any] | None:
    """`cols` (time_pct and total_ns buffers of doubles, one value a row) with share, cumulative,
    in_top and share_basis added (each block one ranked table: `blocks` its first rows, int64) and
    name and short_name (pool[codes[i]] and its short name; codes int32 or int64); None where ranking would
    note something (rank_blocks: the core's rows then). `groups`: where some sections are merged
    from several blocks (an nsys run's kernels and memory operations), each ranked group's first
    rows (int64), a byte a group, 1 where it is several blocks: ranked so once no block alone
    would be noted (`_kahan.RANK_SKIP` where it is a section without times: not ranked), and a bool a
    block, whether it is in a group of several (only checked by the first ranking).
    `unranked`: a byte a block, RANK_SKIP where it is such a section's (share, cumulative, in_top and
    share_basis left empty). `views`: name and short_name as colviews.Coded views of the pool and the
    codes (an int32 or int64 NumPy array, or int64 as a buffer), and in_top one of a byte a row where
    the build writes those, else lists."""
    from profconv.parse.core import _short_of

    scan, kahan = native.load("_summarycells"), native.load("_kahan")
    n = len(cols["time_pct"])
    share, cumulative = array("d", [nan]) * n, array("d", [nan]) * n
    top = _ranked(kahan, cols, blocks, groups, unranked, (share, cumulative), views)
    if top is None:
        return None
    basis: Any = Const("total_ns", n)
    if unranked is not None:  # the rows of the blocks not ranked: none (a value a run of blocks, not a row)
        basis = _basis_runs(np.frombuffer(blocks, dtype=np.int64), np.frombuffer(unranked, dtype=np.uint8) != 0, n)
    cols.update(share=share, cumulative=cumulative, in_top=top, share_basis=basis)
    by_base: dict[str, str] = {}
    shorts = [_short_of(k, by_base) for k in pool]
    if views:  # a str a distinct name, not a list entry a row
        if getattr(codes, "dtype", None) not in (np.int32, np.int64):
            codes = np.frombuffer(codes, dtype=np.int64)  # (its buffer: an int64 array or bytes)
        cols["name"], cols["short_name"] = Coded(pool, codes), Coded(shorts, codes)
    else:
        cols["name"], cols["short_name"] = scan.nvprof_take(pool, codes), scan.nvprof_take(shorts, codes)
    return cols


_TOP = [False, True, None]  # in_top's values by their codes (rank_blocks' bytes, a byte a row)


def _ranked(kahan: Any, cols: dict[str, Any], blocks: Any, groups: tuple[Any, bytes, Any] | None,
            unranked: bytes | None, into: tuple[array, array], views: bool) -> Any:
    """in_top of ranked_names' blocks (share and cumulative written `into`): a list, or where `views` and the
    build writes a byte a row, a colviews.Coded of them (no list entry a row); None where ranking would
    note something."""
    skip: tuple[Any, ...] = () if unranked is None else (unranked,)
    if groups is not None and hasattr(kahan, "RANK_CHECK"):  # (a build that has it has RANK_TOP_GIVEN too)
        skip = (_checked_only(groups, unranked, kahan),)
    codes = bytearray(b"\x02") * len(cols["time_pct"]) if views and hasattr(kahan, "RANK_TOP_CODES") else None
    if codes is not None:  # (the first call given in_top: a merged byte a block is given too)
        skip = (skip[0] if skip else bytes(len(np.frombuffer(blocks, dtype=np.int64))), codes)
    args = (cols["time_pct"], cols["total_ns"], 0.90, *into)
    top = kahan.rank_blocks(blocks, *args, *skip)
    if top is not None and groups is not None and hasattr(kahan, "RANK_TOP_GIVEN"):
        # the merged groups ranked again, the others (each one of the blocks above) kept as ranked there
        merged = np.frombuffer(groups[1], dtype=np.uint8)
        again = np.where(merged == 0, kahan.RANK_SKIP, merged).astype(np.uint8).tobytes()
        top = kahan.rank_blocks(groups[0], *args, again, top)
    elif top is not None and groups is not None:  # (a build older than `top`: every group ranked again)
        top = kahan.rank_blocks(groups[0], *args, groups[1])
    if top is None or codes is None:
        return top
    return Coded(_TOP, np.frombuffer(codes, dtype=np.uint8))


def _checked_only(groups: tuple[Any, bytes, Any], unranked: bytes | None, kahan: Any) -> bytes:
    """rank_blocks' byte a block for its first call where some blocks are merged into groups ranked again
    after it: RANK_CHECK for a block of a merged group (groups[2], a bool a block: checked alone, as rank()
    checks each source table, but not ranked: the second call ranks the group), `unranked`'s byte (0 or
    RANK_SKIP) else."""
    inside = groups[2]
    out = np.zeros(len(inside), dtype=np.uint8) if unranked is None else np.frombuffer(unranked, dtype=np.uint8).copy()
    out[inside & (out == 0)] = kahan.RANK_CHECK
    return out.tobytes()


def _basis_runs(firsts: Any, skipped: Any, n: int) -> Runs:
    """share_basis of n rows whose blocks start at `firsts`: "total_ns", None where `skipped` (a bool a
    block; one block or more), as runs of blocks alike (about two a run of an nsys sweep with memory
    sizes, not one a row)."""
    opens = np.flatnonzero(np.append(True, skipped[1:] != skipped[:-1]))
    sizes = np.diff(np.append(firsts[opens], n))
    scan: Any = native.load("_summarycells")  # (loaded: the readers call this only where it is built)
    return Runs(scan.nvprof_take(["total_ns", None], skipped[opens].astype(np.int64)), sizes)


def trusted(cols: dict[str, Any], n: int) -> Any:
    """Rows over the schema's columns of `cols` (n values each), in the schema's order, not copied."""
    from profconv.parse.schema import COLUMNS
    from profconv.parse.table import Rows

    return Rows.trusted({c: cols[c] for c in COLUMNS if c in cols}, n)
