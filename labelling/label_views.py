"""The label-file pages: import and export label files, list a label set and correct a
stored label's verdict, and the precision report. Each view: fetch, check access
(``labelling.access``), act, render.

A download is sent with a Content-Disposition Django quotes and encodes, whatever the
corpus is called, and is never cached. A correction names the label version it saw, so
a stale form gets a conflict (409) with what the maintainer typed offered again.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header

from labelling import access
from labelling.corrections import NothingToCorrect, StaleCorrection, correct_label
from labelling.forms import LabelCorrectionForm, LabelImportForm, LabelSetForm
from labelling.labels import (
    LabelImportRefused,
    dumps,
    export_labels,
    filename,
    import_labels,
    parse,
)
from labelling.models import Corpus, Label, WorksheetKind
from labelling.precision import precision_report


def download(document: dict) -> HttpResponse:
    response = HttpResponse(dumps(document), content_type="application/json; charset=utf-8")
    # quoted and encoded by Django, whatever the corpus is called (a quote, a newline, é)
    response["Content-Disposition"] = content_disposition_header(True, filename(document))
    response["Cache-Control"] = "no-store"
    return response


@login_required
def labels_import(request):
    access.require_perm(request.user, access.IMPORT_LABELS)
    form = LabelImportForm(request.POST or None, request.FILES or None)
    refused = None
    if request.method == "POST" and form.is_valid():
        try:
            document = parse(form.cleaned_data["upload"].read())
            summary = import_labels(document)
        except LabelImportRefused as error:
            refused = error.reasons
        else:
            messages.success(
                request, f"Imported {summary.created} labels ({summary.unchanged} already stored)."
            )
            return redirect(f"{reverse('labelling:precision')}?{_label_set_query(document)}")
    status = 422 if refused or form.errors else 200
    return render(
        request, "labelling/labels_import.html", {"form": form, "refused": refused}, status=status
    )


def _label_set_query(document: dict) -> str:
    corpus = Corpus.objects.get(name=document["corpus"])
    return f"corpus={corpus.pk}&schema={document['schema']}"


@login_required
def labels_export(request):
    access.require_perm(request.user, access.READ_LABELS)
    form = LabelSetForm(request.GET)
    if not form.is_valid():
        return render(
            request, "labelling/precision.html", {"form": form, "report": None}, status=422
        )
    data = form.cleaned_data
    kind = data["kind"] or WorksheetKind.EXTRACTION
    return download(export_labels(data["corpus"], data["schema"], kind))


@login_required
def precision(request):
    access.require_perm(request.user, access.READ_LABELS)
    form = LabelSetForm(request.GET or None)
    report = None
    if form.is_valid():
        report = precision_report(form.cleaned_data["corpus"], form.cleaned_data["schema"])
    sets = (
        Label.objects.values("transcript__corpus__id", "transcript__corpus__name", "schema_name")
        .distinct()
        .order_by("transcript__corpus__name", "schema_name")
    )
    return render(
        request, "labelling/precision.html", {"form": form, "report": report, "sets": sets}
    )


@login_required
def labels_list(request):
    """The stored labels of one corpus and schema, each with a way to correct it."""
    access.require_perm(request.user, access.MAINTAIN)
    form = LabelSetForm(request.GET)
    if not form.is_valid():
        return render(request, "labelling/labels.html", {"form": form}, status=422)
    labels = Label.objects.filter(
        transcript__corpus=form.cleaned_data["corpus"], schema_name=form.cleaned_data["schema"]
    ).select_related("transcript")
    context = {"form": form, "labels": labels, **form.cleaned_data}
    return render(request, "labelling/labels.html", context)


@login_required
def label_correct(request, pk):
    access.require_perm(request.user, access.MAINTAIN)
    label = get_object_or_404(Label.objects.select_related("transcript__corpus"), pk=pk)
    form = LabelCorrectionForm(request.POST or None, initial={"version": label.version})
    refusal, status = None, 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            correct_label(
                label.pk,
                request.user,
                data["verdict"],
                data["reason"],
                expected_version=data["version"],
            )
        except StaleCorrection as stale:
            label, refusal, status = stale.current, str(stale), 409
            form = LabelCorrectionForm(initial={"version": label.version, **_kept(data)})
        except NothingToCorrect as nothing:
            refusal, status = str(nothing), 422
        else:
            messages.success(request, f"Corrected to {data['verdict']}.")
            return redirect("labelling:label-correct", pk=label.pk)
    elif form.errors:
        status = 422
    context = {
        "label": label,
        "form": form,
        "refusal": refusal,
        "corrections": label.corrections.select_related("corrected_by"),
    }
    return render(request, "labelling/label_correct.html", context, status=status)


def _kept(data: dict) -> dict:
    """What the maintainer typed, offered again after a refusal (the version is not)."""
    return {"verdict": data["verdict"], "reason": data["reason"]}
