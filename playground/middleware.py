"""Refuse an oversized body before anything reads it.

One cap (``CONTEXTGC_MAX_BODY_BYTES``, 256 KiB) for every POST: the API and the
proxy answer 413 in their JSON shapes, the console with a banner it can show in
place of a result. The declared ``Content-Length`` is checked, so nothing is
read or parsed first.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.html import format_html

from playground.errors import openai_shape, too_large_body


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.CONTEXTGC_MAX_BODY_BYTES
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0  # Django treats an unreadable length as an empty body
        if size <= limit:
            return self.get_response(request)
        error = too_large_body(size, limit)
        if request.path.startswith("/v1/"):
            return JsonResponse(openai_shape(error), status=413)
        if request.path.startswith("/api/"):
            response = JsonResponse(error, status=413)
            response["Cache-Control"] = "no-store"
            return response
        page = format_html('<p class="banner banner-error" role="alert">{}</p>', error["message"])
        return HttpResponse(page, status=413)
