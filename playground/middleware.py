"""The site's own middleware: a body cap, pages-only state, and a policy header built once.

``BodyLimitMiddleware`` refuses an oversized body before anything reads it. It sits
last in ``MIDDLEWARE``, so its 413 goes out through the others and carries the same
security and CORS headers as any other answer; none of them reads the body.

The JSON API is stateless: it has no signed-in user and no flash messages, so the
middleware that provide them for pages step aside on ``/api/`` (each a subclass of
Django's own, so the admin's checks still find it). Sessions stay as Django ships
them: the deployment checks look for that exact middleware, and a session that is
never touched costs little.

``ContentSecurityPolicyMiddleware`` sends django-csp's header, but builds the
site-wide policy once per process instead of once per response.
"""

from __future__ import annotations

from functools import cache

from csp.constants import HEADER, HEADER_REPORT_ONLY
from csp.middleware import CheckableLazyObject, CSPMiddleware
from csp.utils import build_policy
from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.core.exceptions import RequestDataTooBig
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from playground import console as work
from playground.errors import openai_shape, too_large_body

API_PREFIX = "/api/"
CONSOLE_PATH = "/console"


class BodyLimitMiddleware:
    """One cap (``CONTEXTGC_MAX_BODY_BYTES``, 256 KiB) for every POST but corpus imports.

    The two corpus import forms (``CONTEXTGC_IMPORT_PATHS``) have their own cap,
    ``CONTEXTGC_MAX_IMPORT_BYTES`` (64 MiB): their files go to disk as they arrive.
    A page over its cap gets a styled 413 page with a way back to the form.

    The API and the proxy answer 413 in their JSON shapes, the console with its page
    (for HTMX, its result) showing the reason where a result would be. The declared
    ``Content-Length`` is checked, so nothing is read or parsed first.

    The console's form is multipart, so a file of the full 256 KiB comes with a little
    framing and a few small fields: the console's cap is higher by
    ``FORM_ALLOWANCE``, and a form whose fields (not files) exceed the cap Django parses
    (``DATA_UPLOAD_MAX_MEMORY_SIZE``) gets the same 413.
    """

    FORM_ALLOWANCE = 16 * 1024

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.CONTEXTGC_MAX_BODY_BYTES
        try:
            size = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            size = 0  # Django treats an unreadable length as an empty body
        console = request.path_info == CONSOLE_PATH and request.method == "POST"
        importing = request.path_info in settings.CONTEXTGC_IMPORT_PATHS
        if importing:  # corpus files: streamed to disk, so their own, larger cap
            limit = settings.CONTEXTGC_MAX_IMPORT_BYTES
        form = (console or importing) and request.content_type == "multipart/form-data"
        if size <= limit + (self.FORM_ALLOWANCE if form else 0):
            if console:
                try:
                    request.POST  # noqa: B018 -- parse here, where a refusal can be a 413
                except RequestDataTooBig:
                    return work.refused(request, too_large_body(size, limit), status=413)
            return self.get_response(request)
        error = too_large_body(size, limit)
        if request.path.startswith("/v1/"):
            return JsonResponse(openai_shape(error), status=413)
        if request.path.startswith(API_PREFIX):
            response = JsonResponse(error, status=413)
            response["Cache-Control"] = "no-store"
            return response
        if console:
            return work.refused(request, error, status=413)
        context = {"message": error["message"], "cap": size_text(limit), "back": way_back(request)}
        return render(request, "too_large.html", context, status=413)


def size_text(size: int) -> str:
    """A byte count as people read it.

    Example:
        >>> size_text(64 * 1024 * 1024), size_text(256 * 1024), size_text(1_900_000)
        ('64 MiB', '256 KiB', '1.81 MiB')
        >>> size_text(10)
        '10 bytes'
    """
    if size < 1024:
        return f"{size} bytes"
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.3g} MiB"
    return f"{size / 1024:.3g} KiB"


def way_back(request) -> str:
    """The page the refused form was on (this site's only), else the front page."""
    referer = request.META.get("HTTP_REFERER", "")
    if referer and url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}):
        return referer
    return "/"


class PagesOnly:
    """Pass ``/api/`` requests straight on: what this middleware keeps is for pages.

    Mixed in before a Django middleware class; the rest of the site gets that class
    unchanged.
    """

    def __call__(self, request):
        if request.path_info.startswith(API_PREFIX):
            return self.get_response(request)
        return super().__call__(request)


class PageAuthenticationMiddleware(PagesOnly, AuthenticationMiddleware):
    """``request.user`` for pages; the API has no users."""


class PageMessageMiddleware(PagesOnly, MessageMiddleware):
    """Flash messages for pages; the API answers in its body."""


# Per-response overrides django-csp's decorators leave on a response.
OWN_POLICY = tuple(
    f"_csp_{kind}{suffix}" for kind in ("config", "update", "replace") for suffix in ("", "_ro")
)
HEADERS = ((HEADER, False, "_csp_exempt"), (HEADER_REPORT_ONLY, True, "_csp_exempt_ro"))


@cache
def site_policy(report_only: bool) -> tuple[str, tuple[str, ...]]:
    """The policy the settings give every response, and the path prefixes it skips."""
    name = "CONTENT_SECURITY_POLICY_REPORT_ONLY" if report_only else "CONTENT_SECURITY_POLICY"
    excluded = (getattr(settings, name, None) or {}).get("EXCLUDE_URL_PREFIXES") or ()
    return build_policy(report_only=report_only), tuple(excluded)


@receiver(setting_changed)
def _policy_changed(*, setting, **kwargs):
    if setting.startswith("CONTENT_SECURITY_POLICY"):
        site_policy.cache_clear()


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    """django-csp's middleware, building the site-wide policy once.

    The policy depends only on the settings unless a view set its own or a page used
    a nonce; those responses go through django-csp unchanged. Every other response
    gets the same headers django-csp would give it.
    """

    def process_response(self, request, response):
        own = any(hasattr(response, name) for name in OWN_POLICY)
        if own or settings.DEBUG or getattr(request, "_csp_nonce", None) is not None:
            return super().process_response(request, response)
        for header, report_only, exempt in HEADERS:
            policy, excluded = site_policy(report_only)
            if (
                policy
                and header not in response
                and not getattr(response, exempt, False)
                and not request.path_info.startswith(excluded)
            ):
                response[header] = policy
        # As django-csp does: a nonce asked for after the header is written is an error.
        request.csp_nonce = CheckableLazyObject(self._csp_nonce_post_response)
        return response
