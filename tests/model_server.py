"""A loopback chat-completions server that answers as a model would, including badly.

``tests.chat_server.ChatServer`` with two more kinds of scripted answer, for the faults a
real endpoint has: ``Drop()`` closes the connection without a byte of answer (a server
that died mid-run), ``Slow(text, seconds)`` answers ``text`` after a wait (a model still
thinking; the wait ends early when the server stops). Every request is recorded before it
is answered, dropped or delayed, so ``len(server.requests)`` is the number of calls made.
``status`` other than 200 answers every request with that error, as ``ChatServer`` does.

    with ModelServer() as server:
        server.script("<contextgc-state>{...}</contextgc-state>", Drop(), Slow("ok", 30))
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import ThreadingHTTPServer

from tests.chat_server import MAX_BODY_BYTES, PATH, ChatServer, Recorded, _Handler, completion


@dataclass(frozen=True)
class Drop:
    """Close the connection without answering."""


@dataclass(frozen=True)
class Slow:
    """Answer ``text`` after ``seconds``."""

    text: str
    seconds: float


class ModelServer(ChatServer):
    """A ``ChatServer`` whose script may also hold ``Drop`` and ``Slow`` answers."""

    def __init__(self, reply=None):
        super().__init__(reply)
        self.stopping = threading.Event()

    def reply_with(self, reply) -> None:
        """Answer every request the script does not cover with ``reply(body)``."""
        self._reply = reply

    def start(self) -> ModelServer:
        self.stopping.clear()
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ModelHandler)
        httpd.daemon_threads = True
        httpd.chat = self  # type: ignore[attr-defined]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        super().stop()


class _ModelHandler(_Handler):
    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if self.path.split("?")[0] != PATH or length > MAX_BODY_BYTES:
            super().do_POST()
            return
        body = json.loads(self.rfile.read(length))
        chat = self.server.chat  # type: ignore[attr-defined]
        headers = {name.lower(): value for name, value in self.headers.items()}
        number, answer = chat._answer(Recorded(self.path, headers, body))
        if chat.status != 200:
            self._json(chat.status, {"error": {"message": "upstream is down"}})
            return
        if isinstance(answer, Drop):
            self.close_connection = True
            return
        if isinstance(answer, Slow):
            if chat.stopping.wait(answer.seconds):
                self.close_connection = True
                return
            answer = answer.text
        self._json(200, completion(number, body, answer))
