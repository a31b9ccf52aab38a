"""A real HTTP server on 127.0.0.1 for tests: it records what it is sent and answers as told.

    with HttpReceiver() as receiver:
        receiver.answers.append((200, {"ok": True}))
        ... code under test posts to receiver.url ...
        receiver.requests[0].json

Answers are used in order; when none are left the last one repeats. An answer may be
`(status, json_body)`, `(status, "text")`, or `"close"` to drop the connection unanswered.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class HttpReceiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.answers: list[Any] = [(200, {})]
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                receiver.requests.append(
                    Received(
                        "POST", self.path, {k.lower(): v for k, v in self.headers.items()}, body
                    )
                )
                answer = (
                    receiver.answers.pop(0) if len(receiver.answers) > 1 else receiver.answers[0]
                )
                if answer == "close":
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                status, payload = answer
                data = (
                    payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):  # keep test output quiet
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> HttpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
