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


def test_sweep_plan_hands_the_choices_to_a_child(tmp_path, monkeypatch):
    """`run --profile ncu` writes its sweeps' choices (export_plan) and the child builds them instead of
    sweeping again, so the profiler sees the configuration Op Time measured; a choice that does not
    build falls back to the sweep."""
    import json as _json

    from profconv.run import sweep as sw
    from profconv.run.models import ConvShape

    s = ConvShape(10000, 50, 1, 28, 28, 5, 0)
    built = []

    def build(cp, params, shape):
        if params.get("TW") == 99:
            raise ValueError("does not fit")
        built.append(dict(params))
        return lambda x, w, b, out: out.append(params["TW"])

    parent = sw.Swept(lambda shape: [{"TW": 2}, {"TW": 4}], build, name="plan-test")
    parent._chosen[sw.shape_key(s)] = ({"TW": 4, "swept": 2}, build(None, {"TW": 4}, s))
    plan = sw.export_plan()
    assert plan["plan-test"] == {"10000,50,1,28,28,5,0": {"TW": 4, "swept": 2}}
    path = tmp_path / "sweep-plan.json"
    path.write_text(_json.dumps(plan))
    monkeypatch.setenv(sw.PLAN_ENV, str(path))

    child = sw.Swept(lambda shape: [{"TW": 2}, {"TW": 4}], build, name="plan-test")  # a fresh process's sweep
    monkeypatch.setattr(sw.Swept, "_sweep", lambda *a: (_ for _ in ()).throw(AssertionError("swept again")))
    out: list = []
    child.launch(None, None, None, None, out, s)
    assert out == [4] and built[-1] == {"TW": 4}  # the parent's choice, its bookkeeping keys left out
    assert child.params(s) == {"TW": 4, "swept": 2, "planned": True}
    other = ConvShape(625, 50, 1, 28, 28, 5, 0)  # a shape the plan does not name: swept as usual
    assert sw.planned_params("plan-test", sw.shape_key(other)) is None
    bad = tmp_path / "bad.json"
    bad.write_text(_json.dumps({"plan-test": {"10000,50,1,28,28,5,0": {"TW": 99}}}))
    monkeypatch.setenv(sw.PLAN_ENV, str(bad))
    assert sw.Swept(lambda shape: [], build, name="plan-test")._planned(None, s) is None  # falls back
    monkeypatch.setenv(sw.PLAN_ENV, str(tmp_path / "missing.json"))
    assert sw.planned_params("plan-test", sw.shape_key(s)) is None
    sw._REGISTRY.pop("plan-test", None)


def test_run_hands_its_sweep_plan_to_the_profiled_child(tmp_path, monkeypatch):
    """session/run.py: the plan file in the run directory and the environment for the child only."""
    import json as _json
    import os

    from profconv.run import sweep as sw
    from profconv.session import run as run_cmd

    monkeypatch.setattr(sw, "export_plan", lambda: {})
    assert run_cmd._sweep_plan(tmp_path) == {} and not (tmp_path / "sweep-plan.json").exists()
    monkeypatch.setattr(sw, "export_plan", lambda: {"tuned": {"1,2,3,4,5,6,0": {"TW": 4, "swept": 9}}})
    env = run_cmd._sweep_plan(tmp_path)
    assert env == {sw.PLAN_ENV: str((tmp_path / "sweep-plan.json").resolve())}
    assert _json.loads((tmp_path / "sweep-plan.json").read_text())["tuned"]["1,2,3,4,5,6,0"]["TW"] == 4
    monkeypatch.delenv(sw.PLAN_ENV, raising=False)
    with run_cmd._environ(env):
        assert os.environ[sw.PLAN_ENV] == env[sw.PLAN_ENV]  # what a child started here inherits
    assert sw.PLAN_ENV not in os.environ
