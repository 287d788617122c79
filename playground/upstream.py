"""The proxy's one outbound call: POST a chat-completions body to the configured upstream.

Standard library only. The server-side key is the only credential ever sent;
nothing from the caller's headers is copied. Any failure to get a 2xx answer —
refused connection, timeout, an HTTP error status — is an ``UpstreamError``,
which the proxy reports as 502.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

from playground import jsonio

MAX_ANSWER_BYTES = 16 * 1024 * 1024
CHUNK_BYTES = 64 * 1024


class UpstreamError(Exception):
    def __init__(self, message: str, *, upstream_status: int | None = None):
        super().__init__(message)
        self.upstream_status = upstream_status


@dataclass(frozen=True)
class Upstream:
    base: str
    key: str
    timeout: float

    @property
    def url(self) -> str:
        return f"{self.base.rstrip('/')}/chat/completions"

    def open(self, body: dict, *, stream: bool):
        """The upstream's response object, status 2xx; else ``UpstreamError``."""
        request = urllib.request.Request(
            self.url,
            data=jsonio.dumps(body),  # (deep nesting too: the body read may be 1,024 deep)
            method="POST",
            headers={
                "Authorization": f"Bearer {self.key}",
                "Content-Type": "application/json",
                "Accept": "text/event-stream" if stream else "application/json",
                "User-Agent": "contextgc-proxy",
            },
        )
        try:
            return urllib.request.urlopen(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            raise UpstreamError(
                f"the upstream answered HTTP {exc.code}", upstream_status=exc.code
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise UpstreamError(f"the upstream could not be reached: {reason}") from None

    def complete(self, body: dict) -> bytes:
        """A whole (non-streamed) answer; it must be a JSON object."""
        with self.open(body, stream=False) as response:
            try:
                raw = response.read(MAX_ANSWER_BYTES + 1)
            except OSError as exc:
                raise UpstreamError(f"the upstream's answer broke off: {exc}") from None
        if len(raw) > MAX_ANSWER_BYTES:
            raise UpstreamError("the upstream's answer is larger than 16 MiB")
        try:
            answer = json.loads(raw)
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            raise UpstreamError("the upstream's answer is not a JSON object")
        return raw

    def stream(self, body: dict) -> Iterator[bytes]:
        """Open the stream now (so failures are 502s), then yield its bytes as they come."""
        response = self.open(body, stream=True)

        def relay() -> Iterator[bytes]:
            try:
                while chunk := response.read1(CHUNK_BYTES):
                    yield chunk
            except OSError:
                return  # the upstream hung up mid-stream; the client sees the stream end
            finally:
                response.close()

        return relay()
