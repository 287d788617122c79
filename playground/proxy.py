"""``POST /v1/chat/completions``: compile the history, forward it, return the answer.

Off (503) unless the operator sets ``CONTEXTGC_UPSTREAM_KEY``: a 503 is never a
model's answer. The caller's ``Authorization`` is never read or forwarded. The
caller may pass compile options in a ``contextgc`` object (same names as
``/api/compile``); it is removed before the body goes upstream. Errors use
OpenAI's error shape so OpenAI clients can read them.

A proxy sits in an agent loop, which re-sends its history on every call, so the
mode is ``cache_friendly`` unless the caller names one: measured with
``tests/bench/billed.py``, its bill is below ``compact``'s on every corpus and price
model but SWE-agent histories at a cached rate of 0.5 (``/api/compile``, a one-off
compile, keeps ``compact``).
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.http import HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt
from pydantic import ValidationError

from compiler import CompilerError
from playground import errors, jsonio, limits, service
from playground.api_schemas import CompileOptions
from playground.limits import RateLimited
from playground.service import RequestError
from playground.upstream import Upstream, UpstreamError

LOOP_MODE = "cache_friendly"  # the mode when the caller names none (see above)
DISABLED = (
    "the proxy is off: the operator has not set CONTEXTGC_UPSTREAM_KEY. This is not a "
    "model response. POST /api/compile compiles a history without calling any model."
)


def openai_errors(view):
    """Answer the web layer's expected errors in OpenAI's shape."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except UpstreamError as exc:
            error = errors.body("upstream_error", str(exc), upstream_status=exc.upstream_status)
            return JsonResponse(errors.openai_shape(error, "upstream_error"), status=502)
        except (RequestError, CompilerError, RateLimited) as exc:
            status, body, headers = errors.describe(exc)
            response = JsonResponse(errors.openai_shape(body), status=status)
            for name, value in headers.items():
                response[name] = value
            return response

    return wrapped


def post_only(view):
    """A 405 in OpenAI's shape, with ``Allow: POST``, for any other method."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        if request.method == "POST":
            return view(request, *args, **kwargs)
        error = errors.not_allowed_body(request.method, request.path, ["POST"])
        response = JsonResponse(errors.openai_shape(error), status=405)
        response["Allow"] = "POST"
        return response

    return wrapped


def read_request(request) -> tuple[dict, dict]:
    """The chat body without our options, and those options; 400/411/422 when unusable."""
    if missing := errors.missing_body(request):
        raise missing
    if refusal := errors.unreadable_body(request):
        raise refusal
    try:
        body = jsonio.loads(request.body)
    except ValueError:
        raise RequestError(400, "invalid_json", "the request body is not JSON") from None
    except RecursionError:
        raise RequestError(400, "invalid_json", "the request body is nested too deeply") from None
    if not isinstance(body, dict):
        raise RequestError(400, "invalid_json", "the request body is not a JSON object")
    options = compile_options(body.pop("contextgc", None))
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(422, "no_messages", "'messages' must be a non-empty array")
    return body, options


def compile_options(given) -> dict:
    """The ``contextgc`` options, typed as ``/api/compile`` types them; 422 naming the field.

    Example:
        >>> compile_options({"teach_protocol": False, "entity_schema": "travel"})
        {'mode': 'cache_friendly', 'entity_schema': 'travel', 'teach_protocol': False}
        >>> compile_options({"invariants": 5})
        Traceback (most recent call last):
        ...
        playground.service.RequestError: 'contextgc' options: invariants: Input should be ...
    """
    if given is None:
        return {"mode": LOOP_MODE}
    if not isinstance(given, dict):
        raise RequestError(422, "invalid_option", "'contextgc' must be an object of options")
    unknown = sorted(set(given) - set(CompileOptions.model_fields))
    if unknown:
        raise RequestError(
            422, "invalid_option", f"unknown contextgc option(s): {', '.join(unknown)}"
        )
    try:
        chosen = CompileOptions.model_validate(given)
    except ValidationError as exc:
        found = errors.validation_body(exc.errors())
        message = f"'contextgc' options: {found['message']}"
        raise RequestError(422, found["error"], message, fields=found["fields"]) from None
    return {"mode": LOOP_MODE, **chosen.model_dump(exclude_unset=True)}


def forward(body: dict, options: dict) -> tuple[dict, dict]:
    """The body to send upstream (compiled messages, a model) and the telemetry."""
    result = service.run_compile(messages=body["messages"], **options)
    model = body.get("model") or settings.CONTEXTGC_UPSTREAM_MODEL
    return {**body, "model": model, "messages": result.compiled_messages}, result.telemetry


def upstream() -> Upstream:
    return Upstream(
        base=settings.CONTEXTGC_UPSTREAM_BASE,
        key=settings.CONTEXTGC_UPSTREAM_KEY,
        timeout=settings.CONTEXTGC_UPSTREAM_TIMEOUT,
    )


@csrf_exempt
@post_only
@openai_errors
def chat_completions(request):
    if not settings.CONTEXTGC_UPSTREAM_KEY:
        error = errors.body("proxy_disabled", DISABLED)
        return JsonResponse(errors.openai_shape(error, "proxy_disabled"), status=503)
    limits.spend(request)
    body, tel = forward(*read_request(request))
    if body.get("stream"):
        response = StreamingHttpResponse(upstream().stream(body), content_type="text/event-stream")
        response["X-Accel-Buffering"] = "no"
    else:
        response = HttpResponse(upstream().complete(body), content_type="application/json")
    response["Cache-Control"] = "no-store"
    response["X-ContextGC-Telemetry"] = service.telemetry_header(tel)
    return response
