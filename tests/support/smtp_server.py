"""A real SMTP server on 127.0.0.1 for tests (aiosmtpd): it keeps every message it accepts.

    with SmtpServer() as smtp:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT = smtp.host, smtp.port
        ... code under test sends mail ...
        smtp.messages[0]["To"], smtp.messages[0].get_body(("plain",)).get_content()

`refuse = True` makes it answer every message with 451 (a temporary failure).
"""

from __future__ import annotations

import email
import email.policy
import socket
import time
from email.message import EmailMessage

from aiosmtpd.controller import Controller


class _Handler:
    def __init__(self, server: SmtpServer) -> None:
        self.server = server

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's API
        if self.server.refuse:
            return "451 Try again later"
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        self.server.messages.append(message)
        self.server.recipients.append(list(envelope.rcpt_tos))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SmtpServer:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []
        self.recipients: list[list[str]] = []
        self.refuse = False
        self.host = "127.0.0.1"
        self.port = _free_port()
        self._controller = Controller(_Handler(self), hostname=self.host, port=self.port)

    def __enter__(self) -> SmtpServer:
        self._controller.start()
        return self

    def __exit__(self, *exc) -> None:
        self._controller.stop()

    def wait_for(self, count: int, timeout: float = 30.0) -> list[EmailMessage]:
        """Block until `count` messages arrived (for tests with a real worker)."""
        deadline = time.monotonic() + timeout
        while len(self.messages) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.messages

    @staticmethod
    def text(message: EmailMessage) -> str:
        return message.get_body(("plain",)).get_content()

    @staticmethod
    def html(message: EmailMessage) -> str:
        return message.get_body(("html",)).get_content()
