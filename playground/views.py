"""The two pages: ``/`` explains, ``/console`` compiles. One view each."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET, require_http_methods

from playground import console as work
from playground.examples import examples
from playground.figures import shipped_figures
from playground.overview import demo


@require_GET
def overview(request):
    context = {"figures": shipped_figures(), "demo": demo(), "examples": examples()}
    return render(request, "playground/overview.html", context)


@require_http_methods(["GET", "POST"])
def console(request):
    """The page; for HTMX just the result (a compile) or the workspace (an example)."""
    done = work.outcome(request)
    if done.report and request.GET.get("download") == "json":
        return work.download(done.report)
    context = {"form": done.form, "report": done.report, "error": done.error}
    context.update(examples=examples(), figures=shipped_figures())
    template = "playground/console.html"
    if request.htmx and not request.htmx.history_restore_request:  # a restore needs the page
        template += "#result" if request.method == "POST" else "#workspace"
    response = render(request, template, context, status=done.status)
    for name, value in done.headers.items():
        response[name] = value
    return response
