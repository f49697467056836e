"""The refusal gates' word lookup in the crate (native/src/gate.rs): an ASCII text's words as Python's split and
letter runs leave them, lower-cased; a text beyond ASCII left to Python."""

from __future__ import annotations

import pytest

from ragpulse._native import WordGate, WordGates
from ragpulse.scorers.declines import cued
from ragpulse.scorers.refusal_gate import answer_may_refuse


@pytest.mark.unit
def test_a_word_of_the_set_between_the_parting_characters() -> None:
    gate = WordGate(["not", "idk"], " -")
    assert [gate.meets_in(text) for text in ("I do NOT know", "IDK", "well-not", "nothing known", "not.", "")] == [
        True, True, True, False, False, False]
    assert gate.meets_in("je ne sais pas, idk—") is None  # not ASCII


@pytest.mark.unit
def test_the_gates_read_an_ascii_answer_as_the_word_sets_did() -> None:
    # letter runs: any ASCII character but a letter parts them
    assert [cued(text) for text in ("Returns are free.", "(NOT)", "x_not_y", "not1", "n0t", "It isn't")] == [
        False, True, True, True, False, True]
    # a cue token with its punctuation ("(not)"), dashes and slashes parting words; then a cue and an anchor
    assert [answer_may_refuse(text)[0] for text in ("The docs say (not) much.", "The docs-not here", "The docs say not]",
                                                  "Returns are free")] == [True, True, False, False]


@pytest.mark.unit
def test_several_sets_in_one_call_a_character_beyond_ascii_parting_words() -> None:
    gates = WordGates([(["not"], " "), (["team"], " .")])
    assert [gates.met_in(text) for text in ("NOT here", "our team.", "not team", "no teams", "é team…", "notéteam")] == [
        1, 2, 3, 0, 2, 3]
    # two words in a row; a set read only after another met
    after = WordGates([(["team"], " "), (["need to", "please", "hole in", "i d"], " -")], needs=[0, 1])
    assert [after.met_in(text) for text in ("our team need  to", "team need it to", "please", "please team",
                                            "team hole-in-one", "team I’d")] == [3, 1, 0, 3, 1, 3]


@pytest.mark.unit
def test_the_answer_gate_says_whether_a_deferral_names_someone() -> None:
    # (may refuse, names someone and holds a deferral's phrase): read again by the answer's reading, not looked up twice
    assert [answer_may_refuse(text) for text in ("Returns are free.", "Our team ships it.", "Please ask our team.",
                                                 "I’ll leave that to our returns team.", "I don't know.")] == [
        (False, False), (False, False), (False, True), (True, True), (True, False)]
