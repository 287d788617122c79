"""Every error the web layer returns, mapped once to one JSON shape.

    {"error": "<code>", "message": "<a sentence a person can act on>", ...details}

The API and the console use this shape; the chat-completions proxy wraps the
same code and message in OpenAI's ``{"error": {"message", "type", "code"}}``
so OpenAI clients can read it.
"""

from __future__ import annotations

from compiler import OptionError, SchemaError, TranscriptError
from playground.limits import RateLimited
from playground.service import OPTION_NAMES, RequestError


def body(code: str, message: str, **extra) -> dict:
    """The error shape.

    Example:
        >>> body("no_messages", "'messages' is empty")
        {'error': 'no_messages', 'message': "'messages' is empty"}
    """
    return {"error": code, "message": message, **extra}


def describe(exc: Exception) -> tuple[int, dict, dict]:
    """(status, body, headers) for an exception the web layer expects; else raises it."""
    if isinstance(exc, RequestError):
        return exc.status, body(exc.code, exc.message, **exc.extra), {}
    if isinstance(exc, TranscriptError):
        return (
            422,
            body(
                "unparseable_transcript",
                f"{exc.reason} (line {exc.line}, column {exc.column})",
                line=exc.line,
                column=exc.column,
                parse_warnings=[str(w) for w in exc.warnings],
            ),
            {},
        )
    if isinstance(exc, SchemaError):
        return 422, body("unknown_schema", str(exc), field="entity_schema"), {}
    if isinstance(exc, OptionError):
        return 422, body("invalid_option", str(exc)), {}
    if isinstance(exc, RateLimited):
        return 429, rate_limited_body(exc), {"Retry-After": str(exc.retry_after)}
    raise exc


def validation_body(problems: list[dict]) -> dict:
    """Request fields that failed validation, each named.

    Example:
        >>> problem = {"loc": ("body", "payload", "mode"), "type": "literal_error",
        ...            "msg": "Input should be 'compact'"}
        >>> validation_body([problem])["message"]
        "mode: Input should be 'compact'"
    """
    fields = [
        {"field": ".".join(str(p) for p in _field_path(e["loc"])), "problem": e["msg"]}
        for e in problems
    ]
    message = "; ".join(
        f"{f['field']}: {f['problem']}" if f["field"] else f["problem"] for f in fields
    )
    options = set(OPTION_NAMES) | {"entity_schema"}
    named = any(f["field"].split(".")[0] in options for f in fields)
    unknown = any(e.get("type") == "extra_forbidden" for e in problems)
    code = "invalid_option" if named or unknown else "invalid_request"
    return body(code, message, fields=fields)


def _field_path(loc) -> tuple:
    loc = tuple(loc)
    return loc[2:] if len(loc) >= 2 and loc[0] == "body" else loc


def missing_body(request) -> RequestError | None:
    """Why a POST has no body to read: 411 when it came chunked, else 400; None if it has one.

    A WSGI server passes a chunked body (``Transfer-Encoding: chunked``, no
    ``Content-Length``) on without a length, so Django reads it as empty: the
    client is asked for a length instead of being told its body is missing.
    """
    if request.body:
        return None
    if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
        return RequestError(
            411,
            "length_required",
            "Content-Length required: send the body with a Content-Length header, "
            "not with Transfer-Encoding: chunked",
        )
    return RequestError(400, "empty_body", "the request body is empty: send a JSON object")


def unreadable_body(request) -> RequestError | None:
    """Why a body will not be read as JSON (415), or None.

    Only ``application/json`` (or a ``+json`` type) is read: a form, ``text/plain`` or
    no type at all is what a page on another site can send without a CORS preflight,
    and reading it would let any page spend its visitors' compile budget. A compressed
    body is refused rather than inflated: the size cap is on the bytes sent.

    Example:
        >>> from django.test import RequestFactory
        >>> post = RequestFactory().post
        >>> unreadable_body(post("/api/compile", "{}", content_type="text/plain")).code
        'unsupported_media_type'
        >>> gzip = post("/api/compile", "{}", "application/json", HTTP_CONTENT_ENCODING="gzip")
        >>> unreadable_body(gzip).message
        "Content-Encoding 'gzip' is not accepted: send the body uncompressed"
        >>> unreadable_body(post("/api/compile", "{}", content_type="application/json")) is None
        True
    """
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding and encoding != "identity":
        return RequestError(
            415,
            "unsupported_content_encoding",
            f"Content-Encoding {encoding[:40]!r} is not accepted: send the body uncompressed",
        )
    kind = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if kind == "application/json" or (kind.startswith("application/") and kind.endswith("+json")):
        return None
    given = f"sent as {kind[:80]!r}" if kind else "sent without a Content-Type"
    return RequestError(
        415,
        "unsupported_media_type",
        f"the body is {given}; send JSON with Content-Type: application/json",
    )


def not_allowed_body(method: str, path: str, allowed) -> dict:
    """A 405's body; the response also carries ``Allow``.

    Example:
        >>> not_allowed_body("GET", "/api/compile", ["POST"])["message"]
        'GET is not allowed on /api/compile; use POST'
    """
    allowed = sorted(allowed)
    message = f"{method} is not allowed on {path}; use {', '.join(allowed)}"
    return body("method_not_allowed", message, allowed=allowed)


def not_found_body(path: str) -> dict:
    """A 404's body for a path under ``/api/`` or ``/v1/`` that names no endpoint.

    Example:
        >>> not_found_body("/api/nope")["message"]
        'nothing is at /api/nope; the endpoints are listed at /api/docs'
    """
    return body("not_found", f"nothing is at {path}; the endpoints are listed at /api/docs")


def rate_limited_body(exc: RateLimited) -> dict:
    return body(
        "rate_limited",
        f"more than {exc.limit} requests in a minute from this client; "
        f"retry in {exc.retry_after} s",
        limit_per_minute=exc.limit,
        retry_after=exc.retry_after,
    )


def too_large_body(size: int, limit: int) -> dict:
    return body(
        "body_too_large",
        f"the request body is {size} bytes; the limit is {limit} bytes ({limit // 1024} KiB)",
        limit_bytes=limit,
    )


def openai_shape(error: dict, kind: str = "invalid_request_error") -> dict:
    """The same error as OpenAI clients expect it.

    Example:
        >>> openai_shape(body("proxy_disabled", "off"), "proxy_disabled")
        {'error': {'message': 'off', 'type': 'proxy_disabled', 'code': 'proxy_disabled'}}
    """
    return {"error": {"message": error["message"], "type": kind, "code": error["error"]}}
