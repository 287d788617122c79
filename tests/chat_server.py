"""A chat-completions server on loopback, for driving the real ``openai`` client.

Standard library only. It speaks as much of the protocol as the official
client needs: ``POST /v1/chat/completions`` answers with a ``chat.completion``
object, or with server-sent ``chat.completion.chunk`` events ending in
``data: [DONE]`` when the request says ``"stream": true``. Every request body
is recorded with its path and headers, so a test asserts on what actually went
over the wire (whose ``Authorization``?), and the assistant's replies are
scripted: a queue of texts, then a callback. To play a failing upstream, set
``status`` (answered with an error object) or ``raw`` (bytes sent as they are).

Bounded: it listens on 127.0.0.1 only, on a port the OS picks, refuses bodies
over ``MAX_BODY_BYTES`` and requests past ``MAX_REQUESTS``, and times out a
silent connection.

    with ChatServer(reply=lambda body: "ok") as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        client.chat.completions.create(model="m", messages=[...])
        server.requests[0]["messages"]
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_REQUESTS = 1000
CREATED = 1_700_000_000  # fixed, so responses are reproducible
PATH = "/v1/chat/completions"

Reply = Callable[[dict], str]


@dataclass(frozen=True)
class Recorded:
    """One request as it arrived."""

    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict


class ChatServer:
    """A scripted chat-completions endpoint; use it as a context manager."""

    def __init__(self, reply: Reply | None = None):
        self.requests: list[dict] = []  # the bodies, in order
        self.seen: list[Recorded] = []  # the same requests with path and headers
        self.status = 200  # anything else: answered with an error object
        self.raw: bytes | None = None  # sent as the whole answer when set
        self._script: deque[str] = deque()
        self._reply = reply
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "the server is not running"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def received(self) -> list[list[dict]]:
        """The ``messages`` of every request, in the order they arrived."""
        with self._lock:
            return [body.get("messages") for body in self.requests]

    def script(self, *replies: str) -> None:
        """Queue assistant replies; they are used before the callback."""
        with self._lock:
            self._script.extend(replies)

    def start(self) -> ChatServer:
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        httpd.daemon_threads = True
        httpd.chat = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _answer(self, request: Recorded) -> tuple[int, str | None]:
        """Record the request; return its number and the reply (None past the bound)."""
        body = request.body
        with self._lock:
            if len(self.requests) >= MAX_REQUESTS:
                return len(self.requests), None
            self.requests.append(body)
            self.seen.append(request)
            number = len(self.requests)
            if self._script:
                return number, self._script.popleft()
        return number, self._reply(body) if self._reply else "ok"


class _Handler(BaseHTTPRequestHandler):
    timeout = 10  # seconds a connection may stay silent
    server_version = "chat-server/1"

    def do_POST(self) -> None:
        if self.path.split("?")[0] != PATH:
            self._json(404, _error("not found"))
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._json(413, _error("request body too large"))
            return
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            self._json(400, _error("body is not JSON"))
            return
        if not isinstance(body, dict):
            self._json(400, _error("body is not a JSON object"))
            return
        chat = self.server.chat  # type: ignore[attr-defined]
        headers = {name.lower(): value for name, value in self.headers.items()}
        number, text = chat._answer(Recorded(self.path, headers, body))
        if text is None:
            self._json(429, _error("request limit reached"))
        elif chat.status != 200:
            self._json(chat.status, _error("upstream is down", "server_error"))
        elif chat.raw is not None:
            self._bytes(200, "application/json", chat.raw)
        elif body.get("stream"):
            self._stream(number, body, text)
        else:
            self._json(200, completion(number, body, text))

    def _json(self, status: int, payload: dict) -> None:
        self._bytes(status, "application/json", json.dumps(payload).encode())

    def _bytes(self, status: int, kind: str, data: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, number: int, body: dict, text: str) -> None:
        # HTTP/1.0: the end of the event stream is the end of the connection.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        for event in events(number, body, text):
            self.wfile.write(event)
            self.wfile.flush()

    def log_message(self, format, *args) -> None:  # keep test output quiet
        pass


def completion(number: int, body: dict, text: str) -> dict:
    """A ``chat.completion`` object answering ``body`` with ``text``."""
    prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages") or ())
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": body.get("model", "test-model"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt // 4,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt // 4 + len(text) // 4,
        },
    }


def chunks(number: int, body: dict, text: str) -> list[dict]:
    """``text`` as ``chat.completion.chunk`` objects: role, one per word, then stop."""
    deltas = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]
    finish = [None] * len(deltas) + ["stop"]
    deltas.append({})
    return [
        {
            "id": f"chatcmpl-{number}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": body.get("model", "test-model"),
            "choices": [{"index": 0, "delta": delta, "finish_reason": why}],
        }
        for delta, why in zip(deltas, finish, strict=True)
    ]


def events(number: int, body: dict, text: str) -> list[bytes]:
    """The server-sent events of a streamed answer, ``data: [DONE]`` last."""
    framed = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks(number, body, text)]
    return [*framed, b"data: [DONE]\n\n"]


def _error(message: str, kind: str = "invalid_request_error") -> dict:
    return {"error": {"message": message, "type": kind}}
