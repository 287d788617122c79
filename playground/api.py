"""The stateless JSON API (django-ninja): compile, schemas, example, instruction, health.

Nothing is stored and every response says so (``Cache-Control: no-store``).
Errors are mapped once, here, to the shape in ``playground.errors``.
"""

from __future__ import annotations

from functools import partial

from django.http import HttpResponse
from ninja import NinjaAPI, Status
from ninja.errors import HttpError, ValidationError

import compiler
from compiler import CompilerError, render_instruction
from playground import errors, limits, outage, service
from playground.api_schemas import (
    CACHE_MARKS_EXAMPLE,
    README_EXAMPLE,
    CompileIn,
    CompileOut,
    ErrorOut,
    ExamplesOut,
    HealthOut,
    InstructionIn,
    InstructionOut,
    LiveOut,
    SchemasOut,
)
from playground.examples import examples
from playground.figures import schema_json
from playground.jsonio import OrjsonParser, OrjsonRenderer, dumps
from playground.views import without_body


class Api(NinjaAPI):
    def create_response(self, request, data, *, status=None, temporal_response=None):
        response = super().create_response(
            request, data, status=status, temporal_response=temporal_response
        )
        response["Cache-Control"] = "no-store"
        return without_body(response) if request.method == "HEAD" else response


class JsonBodyParser(OrjsonParser):
    """A body is read only when it is JSON, sent uncompressed; else a 415 says why."""

    def parse_body(self, request):
        if refusal := errors.unreadable_body(request):
            raise refusal
        return super().parse_body(request)


api = Api(
    title="contextgc",
    version=compiler.__version__,
    description="Compile an agent transcript down to what is currently true. Stateless.",
    urls_namespace="api",
    parser=JsonBodyParser(),
    renderer=OrjsonRenderer(),
)
# Every error an operation can answer is in the document: 405 for another method, the
# body's refusals, and the rate limit's (429, and 503 when its cache cannot be reached).
NOT_ALLOWED = {405: ErrorOut}
BODY_ERRORS = {code: ErrorOut for code in (400, 405, 411, 413, 415, 422)}
ERRORS = {**BODY_ERRORS, 429: ErrorOut, 503: ErrorOut}
# Named request bodies /api/docs offers: the README's, and one with cache_marks.
COMPILE_EXAMPLES = {
    "requestBody": {
        "content": {
            "application/json": {
                "examples": {
                    "readme": {"summary": "The README's curl body", "value": README_EXAMPLE},
                    "cache_marks": {
                        "summary": "Keep the prefix and mark its end for the cache",
                        "value": CACHE_MARKS_EXAMPLE,
                    },
                }
            }
        }
    }
}
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE")


def get(path: str, **options):
    """``api.get`` that answers HEAD as well: the same response, sent without its body.

    HEAD is left out of the OpenAPI document, which would otherwise list every GET twice.
    The document lists the 405 every other method gets.
    """
    given = options["response"]
    options["response"] = {**(given if isinstance(given, dict) else {200: given}), **NOT_ALLOWED}

    def register(view):
        head = api.api_operation(
            ["HEAD"], path, response=options["response"], include_in_schema=False
        )
        return api.get(path, **options)(head(view))

    return register


@api.post(
    "/compile",
    response={200: CompileOut, **ERRORS},
    summary="Compile a transcript",
    operation_id="compile",
    openapi_extra=COMPILE_EXAMPLES,
)
def compile_(request, payload: CompileIn):
    """Compile ``transcript`` (text in any format) or ``messages`` (an array)."""
    # The body is the library's own output, rendered once: re-validating it against
    # CompileOut would cost more than the compile. CompileOut still documents it.
    limits.spend(request)
    result = service.run_compile(**dict(payload))
    response = HttpResponse(dumps(result.as_dict()), content_type="application/json")
    response["Cache-Control"] = "no-store"
    response["X-ContextGC-Telemetry"] = service.telemetry_header(result.telemetry)
    return response


@get(
    "/schemas",
    response={200: SchemasOut, **NOT_ALLOWED},
    summary="Shipped schemas",
    operation_id="schemas",
)
def schemas(request):
    return {"schemas": [schema_json(name) for name in compiler.list_schemas()]}


@get(
    "/example",
    response={200: ExamplesOut, **NOT_ALLOWED},
    summary="Worked examples",
    operation_id="example",
)
def example(request):
    found = examples()
    return {
        "read_path_example": found["read_path"].request,
        "write_path_example": found["write_path"].request,
        "sources": {
            "read_path_example": found["read_path"].source,
            "write_path_example": found["write_path"].source,
        },
    }


@api.post(
    "/protocol-instruction",
    response={200: InstructionOut, **BODY_ERRORS},
    summary="The state-protocol instruction",
    operation_id="protocolInstruction",
)
def protocol_instruction(request, payload: InstructionIn):
    slots = service.instruction_slots(payload.entity_schema, payload.slots)
    text = render_instruction(slots)
    return {"instruction": text, "slots": list(slots), "chars": len(text)}


@get(
    "/health",
    response={200: HealthOut, 503: HealthOut},
    summary="Readiness: the database answers",
    operation_id="health",
)
def health(request):
    """Ready to serve: one real round trip to the database on each call (503 without).

    The reason a check failed, which names the database's host, goes to the server log.
    """
    if outage.database_answers():
        return {"status": "ok", "compiler": compiler.__version__, "database": "ok"}
    body = {"status": "unavailable", "compiler": compiler.__version__, "database": "unavailable"}
    return Status(503, body)


@get(
    "/health/live",
    response={200: LiveOut, **NOT_ALLOWED},
    summary="Liveness: the process answers",
    operation_id="live",
)
def live(request):
    """Alive: the process answers, whatever the database does. Restart it when this fails."""
    return {"status": "ok", "compiler": compiler.__version__}


def _mapped(request, exc, api):
    status, body, headers = errors.describe(exc)
    response = api.create_response(request, body, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


def _invalid(request, exc: ValidationError, api):
    if request.method == "POST" and (missing := errors.missing_body(request)):
        return _mapped(request, missing, api)
    return api.create_response(request, errors.validation_body(exc.errors), status=422)


def _http_error(request, exc: HttpError, api):
    if isinstance(exc.__cause__, service.RequestError):  # the parser refused the body
        return _mapped(request, exc.__cause__, api)
    if exc.status_code == 400:  # ninja's only 400: a body that is not JSON
        cause = f" ({exc.__cause__})" if exc.__cause__ else ""
        body = errors.body("invalid_json", f"the request body is not valid JSON{cause}")
    else:
        body = errors.body("http_error", str(exc))
    return api.create_response(request, body, status=exc.status_code)


for kind in (service.RequestError, CompilerError, limits.RateLimited):
    api.add_exception_handler(kind, partial(_mapped, api=api))
api.add_exception_handler(ValidationError, partial(_invalid, api=api))
api.add_exception_handler(HttpError, partial(_http_error, api=api))


def refuse_other_methods() -> None:
    """A JSON 405 naming the allowed methods, in ``Allow`` too, on every path of the API.

    ninja's own 405 is a plain-text page; this registers, for each path, one
    undocumented operation that takes every method the path has no operation for.
    """
    for path, view in list(api.default_router.path_operations.items()):
        allowed = sorted({method for operation in view.operations for method in operation.methods})
        others = [method for method in METHODS if method not in allowed]
        api.api_operation(others, path, include_in_schema=False)(_refusal(allowed))


def _refusal(allowed: list[str]):
    def not_allowed(request):
        body = errors.not_allowed_body(request.method, request.path, allowed)
        response = api.create_response(request, body, status=405)
        response["Allow"] = ", ".join(allowed)
        return response

    return not_allowed


refuse_other_methods()
