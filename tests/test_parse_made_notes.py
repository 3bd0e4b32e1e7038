"""MadeNotes: a ProfileSet's notes made when first asked for (profconv.parse.made_notes)."""

from __future__ import annotations

import pytest

from profconv.parse.made_notes import MadeNotes


def _notes(calls: list[int], items: list[str]) -> MadeNotes:
    def make() -> list[str]:
        calls.append(1)
        return list(items)

    return MadeNotes(make, len(items))


def test_its_length_is_known_before_the_notes_are_made_and_they_are_made_once():
    calls: list[int] = []
    notes = _notes(calls, ["a", "b", "c"])
    assert len(notes) == 3 and not notes.made() and calls == []
    assert notes[1] == "b" and notes[-1] == "c" and notes[:2] == ["a", "b"] and notes.made()
    assert list(notes) == ["a", "b", "c"] and "b" in notes and notes.index("c") == 2 and notes.count("a") == 1
    assert calls == [1]


@pytest.mark.parametrize("change, want", [
    (lambda n: n.__setitem__(slice(0, 0), ["x", "y"]), ["x", "y", "a", "b"]),  # core: a .gz's notes first
    (lambda n: n.extend(["z"]), ["a", "b", "z"]),
    (lambda n: n.append("z"), ["a", "b", "z"]),
    (lambda n: n.insert(1, "z"), ["a", "z", "b"]),
    (lambda n: n.__delitem__(0), ["b"]),
    (lambda n: n.__setitem__(1, "z"), ["a", "z"]),
])
def test_changed_as_a_list_is(change, want):
    calls: list[int] = []
    notes = _notes(calls, ["a", "b"])
    change(notes)
    assert notes == want and len(notes) == len(want) and calls == [1]


def test_equal_to_a_list_of_the_same_notes_and_added_to_one():
    notes = _notes([], ["a", "b"])
    assert notes == ["a", "b"] and ["a", "b"] == notes and notes != ["a"] and notes == _notes([], ["a", "b"])
    assert notes + ["c"] == ["a", "b", "c"] and ["c"] + notes == ["c", "a", "b"]
    assert type(notes + ["c"]) is list and repr(notes) == "['a', 'b']"
    with pytest.raises(TypeError):
        hash(notes)


def test_a_library_parse_of_a_unified_memory_sweep_makes_none_until_asked(tmp_path):
    """The not-read um_* reports' notes: counted at once (the ProfileSet's lead), made when read, each as the
    readers say it."""
    import profconv
    from profconv.parse.dialects import nsys_csv_sweep

    head = "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name"
    run = ("Generating SQLite file r{k}.sqlite from r{k}.nsys-rep\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n" + head
           + "\n100.0,300,3,100.0,100.0,90,110,10.0,k\n\n"
           "Processing [r{k}.sqlite] with [/opt/nsys/reports/um_cpu_page_faults_sum.py]... \n\n"
           "CPU Page Faults,CPU Instruction Address\n36,0x1f\n4,0x2e\n\n")
    path = tmp_path / "um.log"
    path.write_text("".join(run.format(k=k) for k in range(3)))
    ps = nsys_csv_sweep.read(str(path), str(path))
    assert isinstance(ps.notes, MadeNotes) and not ps.notes.made() and len(ps.notes) == ps.lead == 3
    assert [n.split(" (")[0] for n in ps.notes] == [f"lines {a}-{a + 2}: nsys report um_cpu_page_faults_sum"
                                                   for a in (8, 19, 30)]
    assert profconv.parse(str(path)).notes == ps.notes
