"""Who may see and do what, in one place.

People:

- a **reviewer** (a member of a worksheet as reviewer) judges its rows, one verdict
  each, their own;
- an **adjudicator** (a member as adjudicator) sees agreement and disagreements,
  records final verdicts and exports;
- a **maintainer** holds the app's model permissions (``create_reviewer
  --maintainer`` grants them): imports corpora, builds worksheets, reads agreement,
  exports, merges and imports label files, reads precision;
- anyone else signed in is an **outsider**: every worksheet URL answers 404, so a
  worksheet's existence is not disclosed. A member asking for what their role does
  not allow gets 403.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404

from labelling.models import MemberRole, Worksheet, WorksheetRow

MAINTAIN = "labelling.add_worksheet"
IMPORT_CORPUS = "labelling.add_corpus"
IMPORT_LABELS = "labelling.add_label"
READ_LABELS = "labelling.view_label"
MAINTAINER_PERMISSIONS = (
    "add_corpus",
    "view_corpus",
    "add_worksheet",
    "view_worksheet",
    "add_label",
    "view_label",
)


def is_maintainer(user) -> bool:
    return user.has_perm(MAINTAIN)


def worksheet_for(user, pk: int, *allowed: str) -> tuple[Worksheet, str | None]:
    """The worksheet and the user's role on it.

    ``allowed`` lists what may proceed: ``MemberRole`` values and/or ``"maintainer"``;
    empty means any member or maintainer. Outsiders get 404, others not allowed 403.
    """
    worksheet = get_object_or_404(Worksheet.objects.select_related("run__corpus"), pk=pk)
    role = worksheet.role_of(user)
    maintainer = is_maintainer(user)
    if role is None and not maintainer:
        raise Http404("No such worksheet.")
    if allowed and role not in allowed and not (maintainer and "maintainer" in allowed):
        raise PermissionDenied("Your role on this worksheet does not allow this.")
    return worksheet, role


def reviewer_row(user, pk: int, position: int) -> tuple[Worksheet, WorksheetRow]:
    """A row to judge: only the worksheet's reviewers get one."""
    worksheet, _ = worksheet_for(user, pk, MemberRole.REVIEWER)
    row = get_object_or_404(
        worksheet.rows.select_related("extraction__transcript", "retirement__transcript"),
        position=position,
    )
    return worksheet, row


def adjudicator_row(user, pk: int, position: int) -> tuple[Worksheet, WorksheetRow]:
    worksheet, _ = worksheet_for(user, pk, MemberRole.ADJUDICATOR)
    row = get_object_or_404(
        worksheet.rows.select_related("extraction__transcript", "retirement__transcript"),
        position=position,
    )
    return worksheet, row


def require_perm(user, perm: str) -> None:
    if not user.has_perm(perm):
        raise PermissionDenied("You do not have permission to do this.")
