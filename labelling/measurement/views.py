"""The report pages: stored corpus and records reports, and the jobs that make them.

Each view: fetch, check access (maintainers only: reports quote transcripts), act,
render. A job page polls its own progress with htmx while the job runs and refreshes
itself without JavaScript; every figure on a report page is in its stored JSON and
has the command that reproduces it printed beside it. The captures page is the exception
that stores nothing: it replays the capture files on disk at each visit
(``captures_report``), with the functions the bench's commands print.
"""

from __future__ import annotations

from pathlib import PurePath

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from compiler import list_schemas
from labelling import access
from labelling.measurement import charts
from labelling.measurement.captures_report import Sources, captures_context
from labelling.measurement.measure_render import figure_rows, retirement_rows
from labelling.measurement.models import Job, Report, ReportKind
from labelling.measurement.records_render import rate_text
from labelling.measurement.records_report import GOLD_VERDICTS
from labelling.measurement.tasks import CHUNK_SIZE, start_measure, with_progress
from labelling.measurement.uploads import start_upload_import
from labelling.models import Corpus
from labelling.retirement_labels import retirement_precision

JOBS_SHOWN = 20


class MeasureForm(forms.Form):
    corpus = forms.ModelChoiceField(queryset=Corpus.objects.all())
    schema = forms.ChoiceField(choices=lambda: [(n, n) for n in list_schemas()])
    chunk_size = forms.IntegerField(
        min_value=1, max_value=1000, initial=CHUNK_SIZE, help_text="Transcripts per task."
    )
    repeats = forms.IntegerField(
        min_value=1, max_value=10, initial=1, help_text="Timed repeats per transcript."
    )
    peer = forms.BooleanField(
        required=False, initial=True, label="Measure the peer beside ours (when installed)"
    )


class ImportForm(forms.Form):
    upload = forms.FileField(label="Corpus file", help_text="Imported by a worker.")
    name = forms.CharField(max_length=200, required=False, help_text="Defaults to the file name.")
    provenance = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


def _require_maintainer(user) -> None:
    if not access.is_maintainer(user):
        raise PermissionDenied("Reports are for maintainers.")


@login_required
def index(request, measure_form=None, import_form=None, status=200):
    _require_maintainer(request.user)
    context = {
        "reports": Report.objects.select_related("corpus", "job").defer("figures"),
        "jobs": Job.objects.select_related("corpus").defer("payload")[:JOBS_SHOWN],
        "measure_form": measure_form or MeasureForm(),
        "import_form": import_form or ImportForm(),
        "retirements": retirement_precision(),
    }
    context["retirement_rows"] = retirement_rows(context["retirements"])
    return render(request, "measurement/index.html", context, status=status)


@login_required
@require_POST
def measure(request):
    _require_maintainer(request.user)
    form = MeasureForm(request.POST)
    if not form.is_valid():
        return index(request, measure_form=form, status=422)
    data = form.cleaned_data
    job = start_measure(
        data["corpus"],
        data["schema"],
        chunk_size=data["chunk_size"],
        repeats=data["repeats"],
        use_peer=data["peer"],
        user=request.user,
    )
    return redirect(job)


@login_required
@require_POST
def import_view(request):
    _require_maintainer(request.user)
    access.require_perm(request.user, access.IMPORT_CORPUS)
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return index(request, import_form=form, status=422)
    upload = form.cleaned_data["upload"]
    job = start_upload_import(  # streamed to disk, not held in memory or the database
        upload,
        name=form.cleaned_data["name"] or PurePath(upload.name).name,
        provenance=form.cleaned_data["provenance"],
        user=request.user,
    )
    return redirect(job)


@login_required
def job(request, pk):
    _require_maintainer(request.user)
    found = get_object_or_404(Job.objects.select_related("corpus").defer("payload"), pk=pk)
    found = with_progress(found)
    template = "measurement/_job.html" if request.htmx else "measurement/job.html"
    context = {"job": found, "report": Report.objects.filter(job=found).only("pk").first()}
    return render(request, template, context)


@login_required
def report(request, pk):
    _require_maintainer(request.user)
    found = get_object_or_404(Report.objects.select_related("corpus", "job"), pk=pk)
    if found.kind == ReportKind.RECORDS:
        return render(request, "measurement/records.html", records_context(found))
    return render(request, "measurement/measure.html", measure_context(found))


@login_required
def transcript(request, pk, index):
    _require_maintainer(request.user)
    found = get_object_or_404(Report, pk=pk, kind=ReportKind.MEASURE)
    rows = found.figures.get("per_transcript") or []
    if not 0 <= index < len(rows):
        raise Http404("No such transcript in this report.")
    row = rows[index]
    context = {
        "report": found,
        "row": row,
        "index": index,
        "previous": index - 1 if index else None,
        "next": index + 1 if index + 1 < len(rows) else None,
        "timeline": charts.timeline(
            f"Slots of {row['ident']} over its {row['turns']} turns",
            row.get("history") or [],
            row["turns"],
        ),
        "history": sorted(row.get("history") or [], key=lambda e: (e["turn"], e["slot"])),
    }
    return render(request, "measurement/transcript.html", context)


@login_required
def captures(request):
    _require_maintainer(request.user)
    sources = Sources.of(
        settings.CONTEXTGC_CAPTURES_DIR,
        settings.CONTEXTGC_CAPTURES_CORPUS,
        settings.CONTEXTGC_CAPTURES_RECORDS,
    )
    return render(request, "measurement/captures.html", captures_context(sources))


@login_required
def figures_json(request, pk):
    _require_maintainer(request.user)
    found = get_object_or_404(Report, pk=pk)
    response = JsonResponse(found.figures, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="report-{found.pk}.json"'
    return response


# -- what the templates show ---------------------------------------------------------


def measure_context(report: Report) -> dict:
    figures = report.figures
    per = figures.get("per_transcript") or []
    precision = figures.get("precision") or {}
    context = {
        "report": report,
        "figures": figures,
        "table": figure_rows(figures) if figures["header"]["transcripts"] else [],
        "reduction": charts.reduction_bars(
            f"Token reduction per transcript (ours, N={len(per)})",
            [{"ident": r["ident"], "raw_tokens": r["raw_tokens"], **r["ours"]} for r in per],
        ),
        "transcripts": list(enumerate(per)),
        "gold": _gold_rows(figures.get("gold")),
        "precision": precision,
        "retirement": figures.get("retirement_precision"),
        "retirement_rows": retirement_rows(figures.get("retirement_precision") or {"figures": []}),
        **bill_context(figures.get("loop_bill") or {}),
    }
    if precision.get("figure"):
        rows = [("all slots", precision["all"]), *precision["slots"].items()]
        context["precision_chart"] = charts.rate_bars(
            "Precision per slot over independent units, with 95% Wilson intervals",
            [
                {"label": name, "rate": f["unit_precision"], "n": f["units"],
                 "wilson95": f["wilson95"]}
                for name, f in rows
            ],
        )  # fmt: skip
    return context


BILL_CHARTS = (("openai@0.1", "OpenAI-style prefix caching, cached rate 0.1"),
               ("openai@0.5", "OpenAI-style prefix caching, cached rate 0.5"),
               ("anthropic", "Anthropic-style breakpoints, read 0.1, write 1.25"))  # fmt: skip


def bill_context(bill: dict) -> dict:
    """The loop's bill per strategy: a table row each, and a chart per price model."""
    found = bill.get("strategies") or []
    if not found:
        return {"bill": bill, "bill_rows": [], "bill_charts": []}
    n = f"N={bill['transcripts']} transcripts, {bill['calls']} calls"
    charts_ = [
        charts.bill_bars(
            f"Loop bill vs raw, {words} ({n})",
            [{"label": f["label"], "ratio": f["billed_vs_raw"][model]} for f in found],
        )
        for model, words in BILL_CHARTS
    ]
    rows = [
        {
            "label": f["label"],
            "tokens": f["tokens_vs_raw"],
            "billed": [f["billed_vs_raw"][model] for model in bill["models"]],
            "identifiers": f["identifiers"],
            "system": f["system_verbatim"],
            "task": f["first_user_verbatim"],
        }
        for f in found
    ]
    return {"bill": bill, "bill_rows": rows, "bill_charts": charts_}


def _gold_rows(gold: dict | None) -> list[list]:
    if not gold:
        return []
    keys = [k for k in ("ours", "peer") if k in gold]
    rows = []
    for slot in [*gold["ours"]["slots"], "total"]:
        counts = {k: gold[k]["total"] if slot == "total" else gold[k]["slots"][slot] for k in keys}
        n = sum(counts["ours"].values())
        if n:
            rows.append([slot, n, *(counts[k][v] for k in keys for v in GOLD_VERDICTS)])
    return rows


def records_context(report: Report) -> dict:
    figures = report.figures
    slot_rows = [
        {"label": slot, **_rate_fields(counts)} for slot, counts in figures["by_slot"].items()
    ]
    provenance_rows = [
        {"label": p, **_rate_fields(counts)} for p, counts in figures["by_provenance"].items()
    ]
    return {
        "report": report,
        "figures": figures,
        "slot_chart": charts.rate_bars(
            "Corroborated over decidable, per slot, with 95% Wilson intervals", slot_rows
        ),
        "provenance_chart": charts.rate_bars(
            "Corroborated over decidable, per provenance", provenance_rows
        ),
        "slots": [
            (slot, counts, rate_text(counts["rate"]), figures["by_slot_and_provenance"][slot])
            for slot, counts in figures["by_slot"].items()
        ],
        "provenances": [
            (p, counts, rate_text(counts["rate"])) for p, counts in figures["by_provenance"].items()
        ],
        "total_rate": rate_text(figures["total"]["rate"]),
        "gold_rows": [
            [slot, *(counts[v] for v in GOLD_VERDICTS)]
            for slot, counts in [
                *figures["gold"].get("slots", {}).items(),
                ("total", figures["gold"].get("total") or {}),
            ]
        ]
        if figures["gold"]["available"]
        else [],
    }


def _rate_fields(counts: dict) -> dict:
    rate = counts["rate"]
    return {"rate": rate["rate"], "n": rate["decidable"], "wilson95": rate["wilson95"]}
