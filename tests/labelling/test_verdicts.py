"""Verdicts: each reviewer's own, versioned, never silently overwritten; adjudication."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from labelling.models import Adjudication, Verdict
from labelling.verdicts import (
    NotDisputed,
    RowStatus,
    VerdictConflict,
    adjudicate,
    record_verdict,
    row_states,
)

pytestmark = pytest.mark.django_db


def test_a_first_verdict_is_saved_at_version_one(row, reviewer):
    verdict = record_verdict(row, reviewer, "correct", "  the agent said so  ")
    assert (verdict.verdict, verdict.note, verdict.version) == ("correct", "the agent said so", 1)


def test_a_verdict_on_a_row_with_a_suggestion_records_it_was_offered(row, reviewer):
    assert record_verdict(row, reviewer, "correct").suggestion_offered is True


def test_saving_again_with_the_version_seen_replaces_it(row, reviewer):
    record_verdict(row, reviewer, "correct")
    verdict = record_verdict(row, reviewer, "incorrect", "moved on", expected_version=1)
    assert (verdict.verdict, verdict.note, verdict.version) == ("incorrect", "moved on", 2)


def test_a_second_tab_creating_the_same_verdict_gets_a_conflict(row, reviewer):
    record_verdict(row, reviewer, "correct", expected_version=0)
    with pytest.raises(VerdictConflict) as conflict:
        record_verdict(row, reviewer, "incorrect", expected_version=0)
    assert conflict.value.current.verdict == "correct"
    assert str(conflict.value) == (
        "already saved elsewhere as correct (version 1); yours was not saved — reload to see "
        "it, then save again"
    )
    assert Verdict.objects.get().verdict == "correct"


def test_a_stale_tab_updating_gets_a_conflict_and_changes_nothing(row, reviewer):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, reviewer, "unclear", expected_version=1)
    with pytest.raises(VerdictConflict):
        record_verdict(row, reviewer, "incorrect", expected_version=1)
    stored = Verdict.objects.get()
    assert (stored.verdict, stored.version) == ("unclear", 2)


def test_reviewers_verdicts_on_one_row_are_separate(row, reviewer, other_reviewer):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "incorrect")
    assert dict(Verdict.objects.values_list("reviewer__username", "verdict")) == {
        "alice": "correct",
        "bob": "incorrect",
    }


def test_an_unknown_verdict_is_refused(row, reviewer):
    with pytest.raises(ValueError, match="'maybe' is not one of correct, incorrect, unclear"):
        record_verdict(row, reviewer, "maybe")


@pytest.mark.django_db(transaction=True)
def test_two_concurrent_saves_of_the_same_version_let_exactly_one_win(row, reviewer):
    record_verdict(row, reviewer, "correct")
    barrier, outcomes = threading.Barrier(2), []

    def save(verdict):
        try:
            barrier.wait()
            record_verdict(row, reviewer, verdict, expected_version=1)
            outcomes.append("saved")
        except VerdictConflict:
            outcomes.append("conflict")
        finally:
            connection.close()

    threads = [threading.Thread(target=save, args=(v,)) for v in ("incorrect", "unclear")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["conflict", "saved"]
    assert Verdict.objects.get().version == 2


def test_a_row_is_unlabelled_until_it_has_enough_verdicts(row, reviewer):
    record_verdict(row, reviewer, "correct")
    assert row_states(row.worksheet, rows=[row])[0].status == RowStatus.UNLABELLED


def test_a_row_with_equal_verdicts_is_agreed_with_that_final(row, reviewer, other_reviewer):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "correct")
    state = row_states(row.worksheet, rows=[row])[0]
    assert (state.status, state.final) == (RowStatus.AGREED, "correct")


def test_a_row_with_different_verdicts_is_disputed_without_a_final(row, reviewer, other_reviewer):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "incorrect")
    state = row_states(row.worksheet, rows=[row])[0]
    assert (state.status, state.final) == (RowStatus.DISPUTED, None)


def test_adjudicating_a_dispute_sets_the_final_verdict(row, reviewer, other_reviewer, adjudicator):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "incorrect")
    adjudicate(row, adjudicator, "incorrect", "the agent had moved on by this turn")
    state = row_states(row.worksheet, rows=[row])[0]
    assert (state.status, state.final) == (RowStatus.RESOLVED, "incorrect")
    assert Verdict.objects.get(reviewer=reviewer).verdict == "correct"  # left as it was


def test_adjudicating_a_row_nobody_disputes_is_refused(row, reviewer, other_reviewer, adjudicator):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "correct")
    with pytest.raises(NotDisputed, match="row 1 is agreed, not disputed"):
        adjudicate(row, adjudicator, "incorrect", "no")
    assert Adjudication.objects.count() == 0


def test_an_adjudication_needs_a_reason(row, reviewer, other_reviewer, adjudicator):
    record_verdict(row, reviewer, "correct")
    record_verdict(row, other_reviewer, "incorrect")
    with pytest.raises(ValueError, match="needs a reason"):
        adjudicate(row, adjudicator, "incorrect", "   ")
