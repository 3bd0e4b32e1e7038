"""The autotuner's logic with a fake CUDA clock: the fastest candidate wins, the plan is cached."""

from types import SimpleNamespace

from profconv.run.models import ConvShape
from profconv.run.sweep import Swept


class FakeClock:
    """Stands in for CuPy's events: an op advances the clock by its cost in ms."""

    def __init__(self):
        self.now = 0.0

    def cp(self):
        clock = self

        class Event:
            def record(self):
                self.t = clock.now

            def synchronize(self):
                pass

        cuda = SimpleNamespace(Event=Event, Device=lambda: SimpleNamespace(synchronize=lambda: None),
                               get_elapsed_time=lambda a, b: b.t - a.t)
        return SimpleNamespace(cuda=cuda)


def test_sweep_picks_the_fastest_and_caches_the_plan():
    clock = FakeClock()
    built, calls = [], []
    cost = {1: 3.0, 2: 1.0, 3: 2.0, 4: 5.0}  # candidate -> ms per call

    def build(cp, p, s):
        built.append(p["n"])

        def op(x, w, bias, out):
            calls.append(p["n"])
            clock.now += cost[p["n"]]

        return op

    swept = Swept(lambda s: [{"n": n} for n in cost], build)
    s = ConvShape(2, 3, 1, 8, 8, 3)
    swept.launch(clock.cp(), None, None, None, "out", s)
    assert swept.params(s) == {"n": 2, "swept": 4}
    assert calls[-1] == 2  # the call that triggered the sweep ran the winner
    n_calls = len(calls)
    swept.launch(clock.cp(), None, None, None, "out", s)
    assert calls[n_calls:] == [2] and built.count(2) == 2  # no second sweep: one more call of the plan
    assert swept.params(ConvShape(3, 3, 1, 8, 8, 3)) == {}  # another batch size is another shape


def test_trial_time_is_normalised():
    """The constant-filter design times one channel group: per-channel time decides."""
    clock = FakeClock()

    def trial(cp, p, s):
        def op(x, w, bias, out):
            clock.now += p["group_ms"]
        return op, float(p["channels"])

    swept = Swept(lambda s: [{"group_ms": 4.0, "channels": 8}, {"group_ms": 3.0, "channels": 4}],
                  lambda cp, p, s: (lambda x, w, b, o: None), trial)
    s = ConvShape(2, 8, 1, 8, 8, 3)
    swept.launch(clock.cp(), None, None, None, None, s)
    assert swept.params(s)["channels"] == 8  # 0.5 ms per channel beats 0.75
