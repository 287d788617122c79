"""The smallest client of an OpenAI-compatible chat-completions endpoint: one call, no retry.

The endpoint, the model and the key come from the environment, never from a command
line, so a key cannot land in a shell history or a CI log:

- ``CONTEXTGC_CAPTURE_BASE_URL``: the API root, e.g. ``http://localhost:11434/v1``
  (a local ollama) — the request goes to ``<base>/chat/completions``;
- ``CONTEXTGC_CAPTURE_MODEL``: the model name the endpoint knows;
- ``CONTEXTGC_CAPTURE_API_KEY``: sent as ``Authorization: Bearer …`` when set; a local
  server needs none;
- ``CONTEXTGC_CAPTURE_TIMEOUT``: seconds to wait for one answer (default 600).

No retry, on purpose: a capture checkpoints every turn, so a failed call is re-asked by
re-running the capture, and a count of calls made stays a count of calls made.
Standard library only (``urllib``), so the bench needs no HTTP package.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field

BASE_URL_ENV = "CONTEXTGC_CAPTURE_BASE_URL"
MODEL_ENV = "CONTEXTGC_CAPTURE_MODEL"
KEY_ENV = "CONTEXTGC_CAPTURE_API_KEY"
TIMEOUT_ENV = "CONTEXTGC_CAPTURE_TIMEOUT"
DEFAULT_TIMEOUT = 600.0


class EndpointError(Exception):
    """The endpoint is not configured, could not be reached, or answered with no reply."""


@dataclass(frozen=True)
class Reply:
    """What one call returned: the assistant's text and the ``usage`` object, as sent."""

    content: str
    usage: dict | None = None
    model: str = ""


@dataclass(frozen=True)
class Endpoint:
    """Where the calls go; ``key`` is never written anywhere, only sent."""

    base_url: str
    model: str
    key: str = field(default="", repr=False)
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_env(cls, environ=None) -> Endpoint:
        """The endpoint the environment names; ``EndpointError`` says which variable is missing.

        Example:
            >>> Endpoint.from_env({BASE_URL_ENV: "http://127.0.0.1:9/v1/", MODEL_ENV: "m"})
            Endpoint(base_url='http://127.0.0.1:9/v1', model='m', timeout=600.0)
            >>> Endpoint.from_env({MODEL_ENV: "m"})
            Traceback (most recent call last):
            ...
            labelling.bench.chat_client.EndpointError: set CONTEXTGC_CAPTURE_BASE_URL ...
        """
        env = os.environ if environ is None else environ
        base, model = env.get(BASE_URL_ENV, "").strip(), env.get(MODEL_ENV, "").strip()
        for name, value in ((BASE_URL_ENV, base), (MODEL_ENV, model)):
            if not value:
                raise EndpointError(
                    f"set {name} (the endpoint is read from the environment, "
                    f"never from an argument); see {__name__}"
                )
        if not base.startswith(("http://", "https://")):
            raise EndpointError(f"{BASE_URL_ENV} must start with http:// or https://")
        raw_timeout = env.get(TIMEOUT_ENV, "").strip()
        try:
            timeout = float(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT
        except ValueError:
            raise EndpointError(f"{TIMEOUT_ENV} must be a number of seconds") from None
        if timeout <= 0:
            raise EndpointError(f"{TIMEOUT_ENV} must be positive")
        return cls(base.rstrip("/"), model, env.get(KEY_ENV, "").strip(), timeout)

    def complete(self, messages: list[dict], **params) -> Reply:
        """Ask for one completion of ``messages``; ``params`` go into the body as they are."""
        body = json.dumps({"model": self.model, "messages": messages, **params}).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = response.read()
        except urllib.error.HTTPError as error:
            detail = error.read()[:300].decode("utf-8", "replace")
            raise EndpointError(f"the endpoint answered HTTP {error.code}: {detail}") from None
        except (TimeoutError, urllib.error.URLError, http.client.HTTPException, OSError) as e:
            reason = getattr(e, "reason", None) or e
            raise EndpointError(f"no answer from the endpoint: {reason}") from None
        return _reply(payload)


def _reply(payload: bytes) -> Reply:
    """The assistant's text from a ``chat.completion`` body.

    Example:
        >>> _reply(b'{"choices":[{"message":{"content":"hi"}}],"usage":{"total_tokens":3}}')
        Reply(content='hi', usage={'total_tokens': 3}, model='')
        >>> _reply(b'{"choices":[]}')
        Traceback (most recent call last):
        ...
        labelling.bench.chat_client.EndpointError: the endpoint's answer has no message: ...
    """
    try:
        data = json.loads(payload)
        message = data["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        shown = payload[:200].decode("utf-8", "replace")
        raise EndpointError(f"the endpoint's answer has no message: {shown}") from None
    usage = data.get("usage")
    content = message.get("content") if isinstance(message, dict) else None
    return Reply(
        content if isinstance(content, str) else "",
        usage if isinstance(usage, dict) else None,
        str(data.get("model") or ""),
    )
