"""The worksheet pages: making a worksheet, its summary, the row page reviewers judge on,
a row's whole transcript, a reviewer's own verdicts, agreement, the disagreements and
their adjudication, and a worksheet's export and merge into labels. Each view: fetch,
check access (``labelling.access``), act, render.

The first-run, home and corpus import pages are ``labelling.start_views``; the label
file and precision pages are ``labelling.label_views``.

Every page works without JavaScript (forms post and redirect); with htmx, the row page
and the dispute cards swap in place. A view serves the page and, for an htmx request,
just its partial.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from labelling import access
from labelling.agreement import agreement
from labelling.compiling import turn_text
from labelling.forms import AdjudicationForm, VerdictForm, WorksheetForm
from labelling.label_views import download
from labelling.labels import ExportRefused, LabelImportRefused, export_worksheet, merge_worksheet
from labelling.models import MemberRole, Verdict, VerdictChoice, WorksheetKind
from labelling.verdicts import (
    NotDisputed,
    RowStatus,
    VerdictConflict,
    adjudicate,
    progress_of,
    record_verdict,
    row_states,
)
from labelling.worksheets import Sampling, build_retirement_worksheet, build_worksheet

MAINTAINER = "maintainer"


@login_required
def worksheet_new(request):
    access.require_perm(request.user, access.MAINTAIN)
    form = WorksheetForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        retired = data["kind"] == WorksheetKind.RETIREMENT
        worksheet = (build_retirement_worksheet if retired else build_worksheet)(
            data["corpus"],
            data["schema"],
            name=data["name"],
            creator=request.user,
            sampling=Sampling(
                data["per_slot_budget"], data["limit"], data["seed"], data["suggest"]
            ),
            reviewers=data["reviewers"],
            adjudicators=data["adjudicators"],
            reviews_per_row=data["reviews_per_row"],
        )
        return redirect("labelling:worksheet", pk=worksheet.pk)
    status = 422 if form.errors else 200
    return render(request, "labelling/worksheet_new.html", {"form": form}, status=status)


@login_required
def worksheet(request, pk):
    sheet, role = access.worksheet_for(request.user, pk)
    states = row_states(sheet)
    context = {
        "worksheet": sheet,
        "role": role,
        "maintainer": access.is_maintainer(request.user),
        "progress": progress_of(sheet, request.user) if role == MemberRole.REVIEWER else None,
        "next_row": _next_unjudged(sheet, request.user, 0) if role == MemberRole.REVIEWER else None,
        "counts": {status: sum(s.status == status for s in states) for status in RowStatus},
        "total": len(states),
        "reviewers": sheet.memberships.filter(role=MemberRole.REVIEWER).select_related("user"),
        "adjudicators": sheet.memberships.filter(role=MemberRole.ADJUDICATOR).select_related(
            "user"
        ),
    }
    return render(request, "labelling/worksheet.html", context)


def _next_unjudged(sheet, user, after: int) -> int | None:
    """The first row after ``after`` the user has not judged, wrapping round once."""
    judged = set(
        Verdict.objects.filter(row__worksheet=sheet, reviewer=user).values_list(
            "row__position", flat=True
        )
    )
    positions = list(sheet.rows.order_by("position").values_list("position", flat=True))
    for position in [p for p in positions if p > after] + [p for p in positions if p <= after]:
        if position not in judged:
            return position
    return None


# the key that records each verdict on a row page (static/labelling.js knows them too)
VERDICT_KEYS = {
    VerdictChoice.CORRECT: "c",
    VerdictChoice.INCORRECT: "i",
    VerdictChoice.UNCLEAR: "u",
    VerdictChoice.SAFE_TO_DROP: "d",
    VerdictChoice.STILL_NEEDED: "h",
}


def _row_context(sheet, row, user, form=None, conflict=None, attempted=None):
    mine = Verdict.objects.filter(row=row, reviewer=user).first()
    total = sheet.rows.count()
    return {
        "worksheet": sheet,
        "row": row,
        "extraction": row.extraction,
        "retirement": row.retirement,
        "buttons": [(v.value, v.label, VERDICT_KEYS[v]) for v in sheet.verdicts],
        "mine": mine,
        "form": form
        or VerdictForm(
            initial={"version": mine.version if mine else 0, "note": mine.note if mine else ""},
            verdicts=sheet.verdicts,
        ),
        "conflict": conflict,
        "attempted": attempted,
        "progress": progress_of(sheet, user),
        "previous": row.position - 1 if row.position > 1 else None,
        "next": row.position + 1 if row.position < total else None,
    }


@login_required
def row(request, pk, position):
    sheet, row = access.reviewer_row(request.user, pk, position)
    if request.method != "POST":
        return _render_row(request, _row_context(sheet, row, request.user))
    form = VerdictForm(request.POST, verdicts=sheet.verdicts)
    if not form.is_valid():
        return _render_row(request, _row_context(sheet, row, request.user, form), status=422)
    data = form.cleaned_data
    try:
        record_verdict(
            row, request.user, data["verdict"], data["note"], expected_version=data["version"]
        )
    except VerdictConflict as conflict:
        context = _row_context(
            sheet, row, request.user, conflict=conflict, attempted=data["verdict"]
        )
        return _render_row(request, context, status=409)
    return _after_verdict(request, sheet, row)


def _after_verdict(request, sheet, row):
    following = _next_unjudged(sheet, request.user, row.position)
    if following is None:
        messages.success(request, "Every row of this worksheet has your verdict.")
        url = reverse("labelling:worksheet", args=[sheet.pk])
        if request.htmx:
            return HttpResponse(headers={"HX-Redirect": url})
        return redirect(url)
    url = reverse("labelling:row", args=[sheet.pk, following])
    if not request.htmx:
        return redirect(url)
    next_row = sheet.rows.select_related("extraction__transcript", "retirement__transcript").get(
        position=following
    )
    response = _render_row(request, _row_context(sheet, next_row, request.user))
    response["HX-Push-Url"] = url
    return response


def _render_row(request, context, status=200):
    template = "labelling/row.html#labeller" if request.htmx else "labelling/row.html"
    return render(request, template, context, status=status)


@login_required
def transcript(request, pk, position):
    """The whole transcript behind a row: every turn, every payload in full."""
    sheet, _ = access.worksheet_for(request.user, pk)
    row = get_object_or_404(
        sheet.rows.select_related(
            "extraction__transcript__corpus", "retirement__transcript__corpus"
        ),
        position=position,
    )
    judged = row.judged
    by = set(row.retirement.superseding_turns) if row.retirement else set()
    near = range(judged.turn - 1, judged.turn + 2)
    turns = [
        {
            "index": index,
            "role": message.get("role", ""),
            "text": turn_text(message),
            "registering": index == judged.turn,
            "superseding": index in by,
            "open": index in near or index in by,
        }
        for index, message in enumerate(judged.transcript.messages)
    ]
    context = {
        "worksheet": sheet,
        "row": row,
        "extraction": row.extraction,
        "retirement": row.retirement,
        "transcript": judged.transcript,
        "turns": turns,
    }
    return render(request, "labelling/transcript.html", context)


@login_required
def my_verdicts(request, pk):
    """A table of the signed-in reviewer's verdicts on a worksheet, each with a way to change it."""
    sheet, _ = access.worksheet_for(request.user, pk, MemberRole.REVIEWER)
    verdicts = (
        Verdict.objects.filter(row__worksheet=sheet, reviewer=request.user)
        .select_related("row__extraction__transcript")
        .order_by("row__position")
    )
    context = {
        "worksheet": sheet,
        "verdicts": verdicts,
        "progress": progress_of(sheet, request.user),
    }
    return render(request, "labelling/my_verdicts.html", context)


@login_required
def agreement_view(request, pk):
    sheet, _ = access.worksheet_for(request.user, pk, MemberRole.ADJUDICATOR, MAINTAINER)
    states = row_states(sheet)
    context = {"worksheet": sheet, "pairs": agreement(states), "rows": len(states)}
    return render(request, "labelling/agreement.html", context)


@login_required
def disagreements(request, pk):
    sheet, role = access.worksheet_for(request.user, pk, MemberRole.ADJUDICATOR, MAINTAINER)
    disputes = [
        s for s in row_states(sheet) if s.status in (RowStatus.DISPUTED, RowStatus.RESOLVED)
    ]
    disputes.sort(key=lambda s: (s.status != RowStatus.DISPUTED, s.row.position))
    context = {
        "worksheet": sheet,
        "disputes": disputes,
        "can_adjudicate": role == MemberRole.ADJUDICATOR,
        "verdict_choices": [(v.value, v.label) for v in sheet.verdicts],
    }
    return render(request, "labelling/disagreements.html", context)


@require_POST
@login_required
def adjudicate_view(request, pk, position):
    sheet, row = access.adjudicator_row(request.user, pk, position)
    form = AdjudicationForm(request.POST, verdicts=sheet.verdicts)
    error = None
    if form.is_valid():
        try:
            adjudicate(row, request.user, form.cleaned_data["verdict"], form.cleaned_data["reason"])
        except NotDisputed as refused:
            error = str(refused)
        else:
            if not request.htmx:
                return redirect("labelling:disagreements", pk=sheet.pk)
    state = row_states(sheet, rows=[row])[0]
    context = {
        "worksheet": sheet,
        "dispute": state,
        "form": form,
        "error": error,
        "can_adjudicate": True,
        "verdict_choices": [(v.value, v.label) for v in sheet.verdicts],
    }
    status = 200 if form.is_valid() and error is None else 422
    template = (
        "labelling/disagreements.html#dispute" if request.htmx else "labelling/dispute_page.html"
    )
    return render(request, template, context, status=status)


@login_required
def export(request, pk):
    sheet, _ = access.worksheet_for(request.user, pk, MemberRole.ADJUDICATOR, MAINTAINER)
    try:
        document = export_worksheet(sheet)
    except ExportRefused as refused:
        context = {"worksheet": sheet, "reasons": refused.reasons}
        return render(request, "labelling/export_refused.html", context, status=409)
    return download(document)


@require_POST
@login_required
def merge(request, pk):
    sheet, _ = access.worksheet_for(request.user, pk, MAINTAINER)
    try:
        summary = merge_worksheet(sheet)
    except (ExportRefused, LabelImportRefused) as refused:
        context = {"worksheet": sheet, "reasons": refused.reasons}
        return render(request, "labelling/export_refused.html", context, status=409)
    messages.success(
        request, f"Merged: {summary.created} new labels, {summary.unchanged} unchanged."
    )
    return redirect("labelling:worksheet", pk=sheet.pk)
