"""The console's work for one request: read the form, compile, build the report.

The view stays a few lines: it asks ``outcome(request)`` what happened and
renders it (the whole page, or for HTMX just the part that changed).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import resolve

from compiler import CompilerError
from playground import errors, limits
from playground.examples import examples
from playground.figures import shipped_figures
from playground.forms import CompileForm
from playground.limits import RateLimited
from playground.loop_bill import DEFAULT_MODEL, LoopBill, loop_bill
from playground.present import Report, readable, report
from playground.service import RequestError, counter_named, options, run_compile


@dataclass
class Outcome:
    form: CompileForm
    report: Report | None = None
    error: dict | None = None
    status: int = 200
    headers: dict = field(default_factory=dict)


def outcome(request) -> Outcome:
    """GET: an empty form, or a worked example compiled; POST: the posted form compiled."""
    if request.method == "POST":
        form = CompileForm(request.POST, request.FILES)
        return compile_form(request, form) if form.is_valid() else Outcome(form, status=422)
    slug = request.GET.get("example")
    if slug is None:
        return Outcome(CompileForm())
    return compile_form(
        request, example_form(slug, changed_only=bool(request.GET.get("changed_only")))
    )


def example_form(slug: str, *, changed_only: bool = False) -> CompileForm:
    example = examples().get(slug)
    if example is None:
        raise Http404(f"no example {slug!r}")
    form = CompileForm(
        data={
            "transcript": example.transcript,
            "entity_schema": example.schema or "",
            "mode": example.request.get("mode", "compact"),
            "teach_protocol": example.request.get("teach_protocol", False),
            "invariants": "\n".join(example.request.get("invariants", ())),
            "declaration_policy": "flag",
            "value_policy": "flag",
            "changed_only": changed_only,
        }
    )
    if not form.is_valid():  # the shipped examples are checked by the tests
        raise ValueError(f"example {slug!r} does not fill the form: {form.errors.as_json()}")
    return form


def compile_form(request, form: CompileForm) -> Outcome:
    fields = form.compile_fields()
    try:
        limits.spend(request)
        result = run_compile(**fields)
        bill = bill_of(form)
    except (RequestError, CompilerError, RateLimited) as exc:
        status, body, headers = errors.describe(exc)
        return Outcome(form, error=readable(body), status=status, headers=headers)
    shown = report(
        result,
        text=fields["transcript"],
        source=form.source,
        schema=fields["entity_schema"],
        changed_only=form.cleaned_data["changed_only"],
    )
    return Outcome(form, report=dataclasses.replace(shown, bill=bill))


def bill_of(form: CompileForm) -> LoopBill:
    """The loop's bill for the form's transcript, compiled with the form's options."""
    fields = dict(form.compile_fields())
    text, counter = fields.pop("transcript"), counter_named(fields.pop("token_counter"))
    model = form.cleaned_data["bill_model"] or DEFAULT_MODEL
    return loop_bill(text, options=options(**fields), counter=counter, model=model)


def download(found: Report) -> HttpResponse:
    """The compiled JSON (the API's response body) as a file."""
    response = HttpResponse(found.compiled_json, content_type="application/json")
    response["Content-Disposition"] = 'attachment; filename="contextgc-compiled.json"'
    return response


def refused(request, error: dict, status: int) -> HttpResponse:
    """The console with ``error`` where the result would be, for a request never read.

    For HTMX the result part, which replaces the last one as any result does; otherwise
    the page, with an empty form (the refused form was not read, so it cannot refill it).
    """
    request.resolver_match = resolve(request.path_info)  # for the page's navigation
    context = {"form": CompileForm(), "report": None, "error": error}
    context.update(examples=examples(), figures=shipped_figures())
    template = "playground/console.html"
    if request.headers.get("HX-Request") == "true":
        template += "#result"
    return render(request, template, context, status=status)
