"""A chat-completions upstream on loopback that records what reached it.

Standard library only. Unlike a mock, the proxy talks to it over a real socket,
so a test can assert on the headers that really went over the wire (whose
``Authorization``?) and on the bytes of a real server-sent-event stream.

    with Upstream() as upstream:
        ...point CONTEXTGC_UPSTREAM_BASE at upstream.base_url...
        upstream.requests[0].headers["authorization"]
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CREATED = 1_700_000_000


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict


def completion(body: dict, text: str) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model", "m"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
    }


def events(body: dict, words: list[str]) -> bytes:
    """A chat.completion.chunk stream: one event per piece, a stop, then [DONE]."""
    deltas = [{"role": "assistant", "content": ""}, *({"content": w} for w in words), {}]
    out = []
    for i, delta in enumerate(deltas):
        chunk = {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": body.get("model", "m"),
            "choices": [
                {
                    "index": 0,
                    "delta": delta,
                    "finish_reason": "stop" if i == len(deltas) - 1 else None,
                }
            ],
        }
        out.append(f"data: {json.dumps(chunk)}\n\n")
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


class Upstream:
    """Answers every POST: a completion, an event stream, an error status, or raw bytes."""

    def __init__(self, *, text: str = "Understood.", status: int = 200, raw: bytes | None = None):
        self.text, self.status, self.raw = text, status, raw
        self.requests: list[Recorded] = []
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def answer(self, body: dict) -> tuple[int, str, bytes]:
        """(status, content type, bytes) for one request."""
        if self.status != 200:
            error = {"error": {"message": "upstream is down", "type": "server_error"}}
            return self.status, "application/json", json.dumps(error).encode()
        if self.raw is not None:
            return 200, "application/json", self.raw
        if body.get("stream"):
            return 200, "text/event-stream", events(body, re.split(r"(?<=\s)(?=\S)", self.text))
        return 200, "application/json", json.dumps(completion(body, self.text)).encode()

    def __enter__(self) -> Upstream:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.upstream = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    timeout = 10

    def do_POST(self) -> None:
        upstream = self.server.upstream  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        headers = {name.lower(): value for name, value in self.headers.items()}
        upstream.requests.append(Recorded(self.path, headers, body))
        status, kind, data = upstream.answer(body)
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args) -> None:
        pass
