"""The two pages: ``/`` explains, ``/console`` compiles. One view each; and the JSON 404."""

from __future__ import annotations

import functools

from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_safe

from playground import console as work
from playground import errors
from playground.examples import examples
from playground.figures import shipped_figures
from playground.overview import demo


def without_body(response):
    """The GET response for a HEAD: its headers and length, no body.

    Servers drop a HEAD's body anyway, but gunicorn logs a warning for each one.
    """
    if not response.streaming:
        response["Content-Length"] = str(len(response.content))
        response.content = b""
    return response


def head_without_body(view):
    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        return without_body(response) if request.method == "HEAD" else response

    return wrapped


@require_safe
@head_without_body
def overview(request):
    context = {"figures": shipped_figures(), "demo": demo(), "examples": examples()}
    return render(request, "playground/overview.html", context)


@require_http_methods(["GET", "HEAD", "POST"])
@head_without_body
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


@csrf_exempt  # an API client sends no CSRF token: it gets the JSON 404, not a 403 page
def not_found(request, rest=""):
    """A JSON 404 for a path under ``/api/`` or ``/v1/`` that names no endpoint.

    API clients read JSON, so they get the site's error shape (OpenAI's under ``/v1/``)
    instead of Django's HTML page.
    """
    error = errors.not_found_body(request.path)
    if request.path.startswith("/v1/"):
        return JsonResponse(errors.openai_shape(error), status=404)
    response = JsonResponse(error, status=404)
    response["Cache-Control"] = "no-store"
    return response
