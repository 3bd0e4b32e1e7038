"""The parse engine's own bookkeeping: run context placed on profiles by bisection (linear in
profiles and context lines), the same as a scan of every profile per line."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from profconv.parse import parse_text
from profconv.parse.context import ContextLine
from profconv.parse.core import _Placer
from profconv.parse.schema import ProfileInfo


@st.composite
def _layout(draw):
    spans = draw(st.lists(st.tuples(st.integers(1, 60), st.integers(0, 12)), min_size=0, max_size=8))
    if draw(st.booleans()):
        spans.sort()
    infos = [ProfileInfo(profile=i + 1, tool="nvprof", line_start=a, line_end=a + d) for i, (a, d) in enumerate(spans)]
    commands = sorted(set(draw(st.lists(st.integers(1, 75), max_size=6))))
    lines = draw(st.lists(st.integers(1, 75), max_size=20))
    return infos, commands, lines


@settings(max_examples=400, deadline=None)
@given(_layout())
def test_bisection_places_context_as_the_scan_does(layout):
    infos, commands, lines = layout
    place = _Placer([i.line_start for i in infos], [i.line_end for i in infos], commands)
    for n in lines:
        for kind in ("command", "op_time"):
            c = ContextLine(n, kind)
            assert place(c) == place._scan(c)  # the index of the same profile (None: none)


def test_context_of_many_profiles_is_placed_in_linear_time():
    run = ("$ ./m3 {k}\nOp Time: 0.{k} ms\n==1== NVPROF is profiling process 1, command: ./m3\n"
           "==1== Profiling application: ./m3\n==1== Profiling result:\n"
           "Type  Time(%)  Time  Calls  Avg  Min  Max  Name\n"
           "GPU activities:  100.00%  1.0000ms  1  1.0000ms  1.0000ms  1.0000ms  k{k}\n")
    text = "".join(run.format(k=k) for k in range(1, 4001))
    t = time.process_time()
    ps = parse_text(text)
    took = time.process_time() - t
    assert len(ps.profiles) == 4000
    assert [p.op_times_s for p in ps.profiles[:2]] == [[0.0001], [0.0002]]
    assert ps.profiles[3999].op_times_s == [0.0004]
    assert took < 20  # quadratic placement: 16 million profile tests
