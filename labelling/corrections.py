"""A maintainer corrects a stored label's verdict, with an audit trail.

``correct_label`` changes ``Label.verdict`` in place — label files exported afterwards
carry the corrected verdict — and records a ``LabelCorrection`` (who, when, old, new,
why). Each correction names the label version it was made against and runs under a
row lock on the label: of two maintainers correcting the same label from the same
page, the second is refused with a ``StaleCorrection`` saying what is stored now,
never silently overwriting the first.

A label file exported before a correction still holds the old verdict; importing it
again is refused for that row, as for any file that contradicts a stored label.
"""

from __future__ import annotations

from django.db import transaction

from labelling.models import Label, LabelCorrection, VerdictChoice
from labelling.verdicts import durable_commit


class StaleCorrection(Exception):
    """The label changed since the form was opened; ``current`` is what is stored now."""

    def __init__(self, current: Label, last: LabelCorrection | None):
        who = f" by {last.corrected_by.get_username()}" if last is not None else ""
        super().__init__(
            f"Not saved: this label was corrected{who} after you opened it. It is now "
            f"{current.verdict} (version {current.version}); read that, then correct it "
            "again if you still mean to."
        )
        self.current, self.last = current, last


class NothingToCorrect(ValueError):
    """The correction names the verdict the label already has, or gives no reason."""


def correct_label(
    label_id: int, user, verdict: str, reason: str, *, expected_version: int
) -> LabelCorrection:
    """Set the label's verdict to ``verdict`` if it is still at ``expected_version``."""
    if verdict not in VerdictChoice.values:
        raise NothingToCorrect(f"{verdict!r} is not one of {', '.join(VerdictChoice.values)}")
    if not reason.strip():
        raise NothingToCorrect("Say why the label is corrected: the reason is kept with it.")
    with transaction.atomic():
        durable_commit()  # as durable as the verdicts the label came from
        label = Label.objects.select_for_update().get(pk=label_id)
        if label.version != expected_version:
            raise StaleCorrection(label, label.corrections.select_related("corrected_by").last())
        if label.verdict == verdict:
            raise NothingToCorrect(f"The label is {verdict} already: nothing to correct.")
        correction = LabelCorrection.objects.create(
            label=label,
            corrected_by=user,
            old_verdict=label.verdict,
            new_verdict=verdict,
            reason=reason.strip(),
            version=label.version + 1,
        )
        label.verdict, label.version = verdict, label.version + 1
        label.save(update_fields=["verdict", "version"])
    return correction
