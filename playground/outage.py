"""What the site answers while its database cannot be reached: a 503 that says so.

Under ``/api/`` the API's JSON error shape, under ``/v1/`` OpenAI's, elsewhere the site's
page with the reason; never a stack trace or the database's host, which the server log
keeps (Django logs every uncaught exception with its traceback). A request that touches
the database (a signed-in page, a login, the database-backed rate counter) raises
Django's ``OperationalError`` or ``InterfaceError``, in a view or in a middleware alike;
Django hands any uncaught exception to the site's ``handler500``, ``server_error`` here,
which answers an outage with the 503 and everything else with Django's own 500. One hook
rather than a middleware: a middleware adds stack frames to every request, and deeply
nested transcripts are read up to the stack's limit.

The compile API needs the database only for its rate counter: with memcached configured
(``CONTEXTGC_MEMCACHED``) it keeps compiling through an outage.
"""

from __future__ import annotations

import logging
import sys

from django.db import InterfaceError, OperationalError, connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.defaults import server_error as django_server_error

from playground import errors

DATABASE_DOWN = (OperationalError, InterfaceError)
RETRY_AFTER = "10"  # seconds: a restart or failover usually takes about that
MESSAGE = "the site's database cannot be reached; try again in a moment"

log = logging.getLogger(__name__)


def unavailable(request) -> HttpResponse:
    """The 503 for ``request``'s part of the site."""
    error = errors.body("database_unavailable", MESSAGE)
    if request.path.startswith("/v1/"):
        response = JsonResponse(errors.openai_shape(error, "database_unavailable"), status=503)
    elif request.path.startswith("/api/"):
        response = JsonResponse(error, status=503)
        response["Cache-Control"] = "no-store"
    else:
        response = render(request, "unavailable.html", {"error": error}, status=503)
    response["Retry-After"] = RETRY_AFTER
    return response


def server_error(request, *args, **kwargs):
    """``handler500``: the outage's 503 when the database was lost, else Django's 500."""
    if isinstance(sys.exc_info()[1], DATABASE_DOWN):
        return unavailable(request)
    return django_server_error(request, *args, **kwargs)


def database_answers() -> bool:
    """One real round trip to the database, on every call.

    A kept connection (``CONN_MAX_AGE``) is not proof the server is still there:
    ``ensure_connection()`` returns at once on it. ``SELECT 1`` goes to the server.
    """
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DATABASE_DOWN as exc:
        log.warning("health check: the database cannot be reached: %s", exc)
        return False
    return True
