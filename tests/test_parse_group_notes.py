"""profconv.parse.group_notes: a sweep's merged groups' table notes read by key from their notes."""

import pickle

import numpy as np

from profconv.parse.core import ProfileSet, table_note
from profconv.parse.group_notes import GroupNotes

TEXTS = ["lines 5-16: merged from 2 source tables (starting at lines 5, 11); x",
         "lines 31-45: merged from 2 source tables (starting at lines 31, 40); x",
         "lines 50-60: merged from 3 source tables (starting at lines 50, 52, 57); x"]
KEYS = [(1, "gpu"), (2, "gpu"), (2, "api")]


def _notes() -> GroupNotes:
    notes = [table_note(p, s, t) for (p, s), t in zip(KEYS, TEXTS)]
    return GroupNotes(notes, np.array([1, 2, 2], dtype=np.int64), np.array([0, 0, 1], dtype=np.int64), ["gpu", "api"])


def test_it_is_the_dict_of_the_texts_by_key_in_order():
    got, want = _notes(), {k: [t] for k, t in zip(KEYS, TEXTS)}
    assert got == want and want == got and len(got) == 3
    assert list(got) == KEYS and list(got.keys()) == KEYS and list(got.values()) == [[t] for t in TEXTS]
    assert list(got.items()) == list(want.items()) and dict(got) == want
    assert got[(2, "api")] == [TEXTS[2]] and got.get((2, "api")) == [TEXTS[2]]
    assert got.get((3, "gpu"), []) == [] and (1, "api") not in got and (1, "gpu") in got
    assert type(next(iter(got))[0]) is int, "profile numbers as Python ints (JSON, --profile)"
    got[(1, "gpu")].append("changed")  # (a new list each look)
    assert got[(1, "gpu")] == [TEXTS[0]]
    merged: dict = {}
    merged.update(got)  # (stream.py joins parts' table notes so)
    assert merged == want and pickle.loads(pickle.dumps(got)) == want


def test_a_profile_set_over_it_gives_its_general_notes_and_one_profile():
    notes = _notes()
    ps = ProfileSet(None, None, "x.log", [], [*notes.notes, "another note"], notes)
    assert ps.general_notes() == ["another note"]
    assert {k: v for k, v in ps.table_notes.items() if k[0] == 2} == {KEYS[1]: [TEXTS[1]], KEYS[2]: [TEXTS[2]]}
