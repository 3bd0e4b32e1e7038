"""A long log's warnings held past a batch in a temporary file (profconv/parse/note_list.py): the same
notes in the same order, a batch at a time or one by one, with the stream's whole-file note first."""

from __future__ import annotations

from profconv.parse import note_list
from profconv.parse.note_list import NoteList


def test_notes_past_a_batch_come_back_in_order(monkeypatch):
    monkeypatch.setattr(note_list, "BATCH", 3)
    notes = NoteList()
    given = [f"profile {k}, gpu table, a note \"{k}\" caf\u00e9\nx" for k in range(10)]
    for k in range(0, 10, 2):
        notes.extend(given[k : k + 2])
    assert notes.spilled == 8 and notes.held == given[8:] and len(notes) == 10
    assert list(notes) == given and list(notes) == given  # (read twice: the file from its start)
    assert [len(b) for b in notes.batches()] == [4, 4, 2]
    notes.after(["line(s) 7: damaged"])
    assert len(notes) == 11 and list(notes) == ["line(s) 7: damaged", *given]
    notes.close()
    assert notes.spill.file is None


def test_a_few_notes_stay_in_memory():
    notes = NoteList()
    notes.extend(["a", "b"])
    assert notes.spill.file is None and list(notes) == ["a", "b"] and list(notes.batches()) == [["a", "b"]]
    assert len(NoteList()) == 0 and list(NoteList().batches()) == []


def test_lists_share_one_spill_file(monkeypatch):
    """The lists of one call keep their batches in one SpillFile (one descriptor for all), each
    list's own notes in order."""
    monkeypatch.setattr(note_list, "BATCH", 2)
    spill = note_list.SpillFile()
    a, b = NoteList(spill), NoteList(spill)
    for k in range(5):
        a.extend([f"a{k}"])
        b.extend([f"b{k}", f"b{k}'"])
    assert list(a) == [f"a{k}" for k in range(5)] and list(b) == [x for k in range(5) for x in (f"b{k}", f"b{k}'")]
    assert (a.spilled, b.spilled, len(a.where), len(b.where)) == (4, 10, 2, 5)
    assert spill.size == sum(n for _, n in a.where + b.where) and spill.get(*a.where[0]) == b'["a0","a1"]'
    spill.close()
    assert spill.file is None


def test_a_lead_list_comes_before_the_first_notes(monkeypatch):
    """A long log's parts' lead notes (ProfileSet.lead: a report not read, in file order) before the
    stream's whole-file note, then the other notes: the whole read's order (stream.whole_notes)."""
    monkeypatch.setattr(note_list, "BATCH", 2)
    spill = note_list.SpillFile()
    leads, notes = NoteList(spill), NoteList(spill)
    leads.extend(["lines 3-5: a", "lines 9-9: b", "lines 20-22: c"])
    notes.extend(["profile 1, gpu table, t1", "profile 2, gpu table, t2", "profile 3, gpu table, t3"])
    notes.after(["line(s) 7: damaged"], leads)
    assert len(notes) == 7
    assert list(notes) == ["lines 3-5: a", "lines 9-9: b", "lines 20-22: c", "line(s) 7: damaged",
                           "profile 1, gpu table, t1", "profile 2, gpu table, t2", "profile 3, gpu table, t3"]
    spill.close()
