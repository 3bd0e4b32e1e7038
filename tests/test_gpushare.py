"""run.user.gpushare: grade's children sharing one GPU, each timed call alone on it (flock, real processes)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from profconv.grade.pool import Timeline
from profconv.run.user import gpushare
from profconv.run.user.worker import PROGRESS

TIMED = textwrap.dedent("""
    import sys, time
    from profconv.run.user.gpushare import GpuShare
    share = GpuShare(sys.argv[1], say=lambda step: print("say", step, flush=True))
    share.acquire_shared()
    print("started", flush=True)
    with share.exclusive():
        print("alone", time.monotonic(), flush=True)
        time.sleep(float(sys.argv[2]))
        print("done", time.monotonic(), flush=True)
    share.close()
""")


def _timed_child(lock: Path, hold_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", TIMED, str(lock), str(hold_s)], stdout=subprocess.PIPE, text=True)


def _line(proc: subprocess.Popen, starts: str) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith(starts):
            return line
    raise AssertionError(f"no {starts!r} line")


def test_a_timed_call_waits_for_the_other_child_to_finish_its_step(tmp_path: Path) -> None:
    lock = tmp_path / "gpu.lock"
    said: list[str | None] = []
    mine = gpushare.GpuShare(lock, say=said.append)
    mine.acquire_shared()  # a step of checking in progress
    child = _timed_child(lock, 0.3)
    assert _line(child, "say") == f"say {gpushare.WAIT_STEP}\n"  # it asked and had to wait: it says so
    time.sleep(0.3)
    assert child.poll() is None  # still waiting: no timed call while another child is inside a step
    t_checkpoint = time.monotonic()
    assert mine.checkpoint() is True  # the step ends: the timed call goes first, the next step waits for it
    back = time.monotonic()
    alone = float(_line(child, "alone").split()[1])
    done = float(_line(child, "done").split()[1])
    assert t_checkpoint <= alone and done <= back  # the whole timed call inside this child's checkpoint
    assert back - t_checkpoint >= 0.25
    assert said == [gpushare.WAIT_STEP, None]  # this child waited too (for the timed call), then went on
    assert child.wait(10) == 0
    assert mine.checkpoint() is False  # nobody waits: the step goes on, the GPU kept
    mine.close()


def test_no_new_step_starts_while_a_timed_call_waits(tmp_path: Path) -> None:
    """Writer first: a child waiting to time holds the gate, so the other child's next step waits behind it."""
    lock = tmp_path / "gpu.lock"
    mine = gpushare.GpuShare(lock)
    mine.acquire_shared()
    child = _timed_child(lock, 0.2)
    _line(child, "say")  # it waits for the shared lock to go
    third = gpushare.GpuShare(lock)  # another job's child, starting now: gets in only after the timed call
    mine.release()
    t = time.monotonic()
    third.acquire_shared()
    assert time.monotonic() - t >= 0.15
    done = float(_line(child, "done").split()[1])
    assert done <= time.monotonic()
    for s in (mine, third):
        s.close()
    child.wait(10)


def test_a_dead_child_lets_go_of_the_gpu(tmp_path: Path) -> None:
    lock = tmp_path / "gpu.lock"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from profconv.run.user.gpushare import GpuShare
        s = GpuShare(sys.argv[1]); s.acquire_shared(); print("held", flush=True); time.sleep(60)
    """), str(lock)], stdout=subprocess.PIPE, text=True)
    _line(holder, "held")
    mine = gpushare.GpuShare(lock)
    holder.kill()  # a crashed or killed child: the kernel drops its locks with its files
    holder.wait()
    t = time.monotonic()
    with mine.exclusive():
        pass
    assert time.monotonic() - t < 2.0
    mine.close()


def test_exclusive_synchronises_before_letting_go_and_returns_to_shared(tmp_path: Path) -> None:
    synced: list[str] = []
    share = gpushare.GpuShare(tmp_path / "gpu.lock", sync=lambda: synced.append("sync"))
    share.acquire_shared()
    with share.exclusive():
        assert share.held == "exclusive"
        with share.exclusive():  # nested: already alone
            assert share.held == "exclusive"
    assert share.held == "shared"
    assert synced == ["sync", "sync"]  # the shared step before, the timed call after
    share.close()
    assert not share.active and share.held == ""


def test_without_a_lock_path_everything_is_a_no_op() -> None:
    share = gpushare.start(None)
    assert not share.active
    gpushare.checkpoint()
    with gpushare.exclusive():
        pass
    gpushare.release()
    assert share.held == "" and share.waits == 0


def test_a_lost_context_still_lets_go(tmp_path: Path) -> None:
    def lost() -> None:
        raise RuntimeError("cudaErrorIllegalAddress")

    lock = tmp_path / "gpu.lock"
    share = gpushare.GpuShare(lock, sync=lost)
    share.acquire_shared()
    with pytest.raises(RuntimeError):
        share.release()
    assert share.held == ""
    other = gpushare.GpuShare(lock)
    with other.exclusive():  # not blocked: the lock went with the failed synchronisation
        pass
    other.close()
    share.close()


def test_the_worker_counts_waits_for_the_gpu_out_of_the_time_limit(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    tl = Timeline(log)
    tl.steps = [[0.0, "ece408-fa20/k/conv1: check"], [1.0, gpushare.WAIT_STEP], [3.5, "ece408-fa20/k/conv1: check"],
                [4.0, gpushare.WAIT_STEP], [4.25, "ece408-fa20/k/conv1: timing"]]
    assert tl.waited() == pytest.approx(2.75)
    log.write_text(f"{PROGRESS}{gpushare.WAIT_STEP}\n")  # waiting now: the wait so far counts too
    tl2 = Timeline(log)
    tl2._read()
    time.sleep(0.1)
    assert tl2.waited() >= 0.09
    # a child that waited 0.4 s of a 0.3 s limit is not killed at 0.3 s
    rcs = iter([None] * 6 + [0])
    assert tl2.follow(lambda wait: (time.sleep(wait), next(rcs))[1], 0.3) == 0


def test_a_kernel_run_again_alone_holds_the_gpu_from_start_to_release(tmp_path: Path) -> None:
    lock = tmp_path / "gpu.lock"
    alone = gpushare.start(lock, alone=True)
    assert alone.held == "exclusive"
    gpushare.checkpoint()  # no step lets another child in
    with gpushare.exclusive():  # its timed calls: already alone
        pass
    assert alone.held == "exclusive"
    other = gpushare.GpuShare(lock)
    child = _timed_child(lock, 0.0)
    assert _line(child, "say") == f"say {gpushare.WAIT_STEP}\n"  # another job's child waits for the release
    gpushare.release()
    assert child.wait(10) == 0
    other.close()
    gpushare.start(None)


def test_each_user_has_a_lock_folder_of_their_own(monkeypatch) -> None:
    import os
    import tempfile

    from profconv.grade.gpus import lock_path

    monkeypatch.delenv("PROFCONV_GPU_LOCKS", raising=False)
    got = lock_path("GPU-94c5870c-bf0b/x y")
    assert got == f"{tempfile.gettempdir()}/profconv-gpu-locks-{os.getuid()}/GPU-94c5870c-bf0b_x_y.lock"
    monkeypatch.setenv("PROFCONV_GPU_LOCKS", "/run/locks")
    assert lock_path("gpu0") == "/run/locks/gpu0.lock"


def test_a_checkpoint_nobody_waits_at_costs_no_synchronisation(tmp_path: Path) -> None:
    """The step goes on without the device synchronised when no child waits to time; it ends (synchronised,
    lock let go) only when one does."""
    lock = tmp_path / "gpu.lock"
    synced: list[str] = []
    mine = gpushare.GpuShare(lock, sync=lambda: synced.append("sync"))
    mine.acquire_shared()
    for _ in range(3):
        mine.checkpoint()
    assert synced == [] and mine.held == "shared"
    child = _timed_child(lock, 0.1)
    _line(child, "say")  # it waits for this child's step to end
    mine.checkpoint()
    assert synced == ["sync"] and mine.held == "shared"
    assert child.wait(10) == 0
    mine.close()


def test_a_pass_holds_the_gpu_for_what_it_times_and_lets_go_between(tmp_path: Path) -> None:
    share = gpushare.start(tmp_path / "gpu.lock")
    try:
        with gpushare.Turns() as turns:
            turns.let_go()  # nothing held yet: the first layer's buffers are made shared
            assert share.held == "shared"
            turns.hold()
            turns.hold()  # already alone
            assert share.held == "exclusive"
            turns.let_go()
            assert share.held == "shared"
            turns.hold()
        assert share.held == "shared"  # the block's end lets go
    finally:
        gpushare.start(None)


def test_a_child_whose_context_is_lost_gives_its_gpu_back_and_keeps_its_record(tmp_path: Path, monkeypatch) -> None:
    """grade.zygote.give_back_gpu after a kernel lost the CUDA context (an edge shape's illegal address, window
    s8c): the device cannot synchronise, yet the lock is let go and nothing is raised -- the child used to die
    there (exit 1) after writing its record, and its verdict came without the course pass's Correctness."""
    import sys
    import types

    from profconv.grade import zygote

    class Lost:
        def synchronize(self) -> None:
            raise RuntimeError("cudaErrorIllegalAddress: an illegal memory access was encountered")

    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(Device=Lost)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", fake)
    lock = tmp_path / "gpu0.lock"
    share = gpushare.start(lock, fake)
    assert share.held == "shared"
    try:
        zygote.give_back_gpu()  # no exception
        assert share.held == ""
        other = gpushare.GpuShare(lock)
        t = time.monotonic()
        with other.exclusive():  # the lock is free: another job's timed call goes at once
            pass
        assert time.monotonic() - t < 1.0
        other.close()
    finally:
        gpushare.start(None)


def test_each_lock_event_is_noted_with_the_code_that_made_it_and_written_on_release(tmp_path: Path) -> None:
    share = gpushare.start(tmp_path / "gpu.lock", marks=tmp_path / "child.gpusteps.json")
    try:
        assert gpushare.checkpoint() is False  # nobody waits: a step that went on
        with gpushare.exclusive():
            pass
        gpushare.release()
        events = [(e, where.split(":")[0]) for _, e, where in share.marks]
        here = "test_gpushare.test_each_lock_event_is_noted_with_the_code_that_made_it_and_written_on_release"
        assert events == [("shared", here), ("step", here), ("release", here), ("alone", here),
                          ("release", here), ("shared", here), ("release", here)]
        written = json.loads((tmp_path / "child.gpusteps.json").read_text())
        assert [e for _, e, _ in written] == [e for e, _ in events]
        assert all(b[0] >= a[0] for a, b in zip(written, written[1:]))  # seconds since start, in order
    finally:
        gpushare.start(None)


def test_without_a_lock_nothing_is_noted_or_written(tmp_path: Path) -> None:
    share = gpushare.start(None, marks=tmp_path / "child.gpusteps.json")
    gpushare.checkpoint()
    gpushare.release()
    assert share.marks == [] and not (tmp_path / "child.gpusteps.json").exists()


def test_a_child_that_gave_its_gpu_back_has_time_for_its_records_beyond_the_kernels_limit(tmp_path: Path) -> None:
    from profconv.grade.pool import TAIL_S
    from profconv.run.user.worker import GPU_RELEASED

    tl = Timeline(tmp_path / "child.log")
    tl.steps = [[0.0, "ece408-fa20/k/conv1: check"], [1.0, gpushare.WAIT_STEP], [3.0, "ece408-fa20/k/conv1: timing"]]
    assert tl.deadline(45.0) == pytest.approx(tl.t0 + 47.0, abs=0.01)  # its own 45 s, the 2 s wait not counted
    tl.steps += [[40.0, GPU_RELEASED], [40.0, "CUPTI records: flush"]]
    assert tl.released_at() == 40.0 and tl.deadline(45.0) == pytest.approx(tl.t0 + 40.0 + TAIL_S, abs=0.01)
    assert tl.deadline(600.0) == pytest.approx(tl.t0 + 602.0, abs=0.01)  # a longer limit of its own stays
