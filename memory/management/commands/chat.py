"""`python manage.py chat --person Nana`: talk with Clara in the terminal, through the bot API."""

import logging
import os
import sys
import uuid

from django.core.management.base import BaseCommand, CommandError

from memory.companion.bot import Companion, in_process_client, replier_from_settings
from memory.companion.client import ClaraApiError, ClaraClient

# The same name is always the same person: their id is derived from the name.
PERSON_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "person.clara-memory")
GOODBYES = {"bye", "goodbye", "bye bye", "bye!", "goodbye!"}
# A failed turn is reported and the conversation goes on; other refusals end it.
TRANSIENT = {0, 502, 503, 504}


def person_id_for(name: str) -> uuid.UUID:
    return uuid.uuid5(PERSON_NAMESPACE, " ".join(name.split()).casefold())


class Command(BaseCommand):
    help = (
        "Talk with Clara in the terminal as PERSON. Every exchange is stored through the bot API. "
        "An empty line, 'bye' or end of input ends the conversation and closes the session. "
        "Without --url it runs in-process (no server needed) with a temporary API key."
    )
    stealth_options = ("stdin",)

    def add_arguments(self, parser):
        parser.add_argument("--person", required=True, help="the person's name, e.g. Nana")
        parser.add_argument(
            "--url", help="a running server, e.g. http://127.0.0.1:8000 (default: in-process)"
        )
        parser.add_argument(
            "--key",
            help="the bot API key (default: $CLARA_API_KEY with --url, else a temporary one)",
        )
        parser.add_argument("--session", type=uuid.UUID, help="resume this session")

    def handle(self, *args, person: str, url: str | None, key: str | None, session, **options):
        name = " ".join(person.split())
        if not name:
            raise CommandError("--person needs a name.")
        stdin = options.get("stdin") or sys.stdin
        # One INFO line per request would drown the conversation.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        if url:
            key = key or os.environ.get("CLARA_API_KEY")
            if not key:
                raise CommandError("With --url, give --key or set CLARA_API_KEY.")
            connection = ClaraClient(url, key)
        else:
            connection = in_process_client(key_name="manage.py chat (temporary)", api_key=key)
        with connection as client:
            self._converse(client, name, session, stdin)

    def _converse(self, client: ClaraClient, name: str, session_id, stdin) -> None:
        try:
            session = client.resolve_session(
                session_id=session_id, user_id=person_id_for(name), display_name=name
            )
        except ClaraApiError as exc:
            raise CommandError(f"Could not start the session: {exc}") from exc
        self.stderr.write(f"Session {session.session_id} with {name}. An empty line ends it.")
        companion = Companion(client, replier_from_settings(display_name=name))
        interactive = stdin.isatty()
        try:
            while True:
                if interactive:
                    self.stdout.write(f"{name}: ", ending="")
                    self.stdout.flush()
                line = stdin.readline()
                message = line.strip()
                if not message:
                    break
                if message.casefold() in GOODBYES:
                    self._store_goodbye(client, session.session_id, message, name)
                    break
                try:
                    result = companion.turn(session.session_id, message)
                except ClaraApiError as exc:
                    if exc.status not in TRANSIENT:
                        raise CommandError(f"The memory refused the turn: {exc}") from exc
                    self.stderr.write(f"(The memory is unavailable just now: {exc.detail})")
                    continue
                self.stdout.write(f"Clara: {result.reply}")
        finally:
            try:
                closed = client.close_session(session.session_id)
                self.stderr.write(f"Session closed ({closed.message_count} messages).")
            except ClaraApiError as exc:
                self.stderr.write(f"Could not close the session: {exc}")

    def _store_goodbye(self, client: ClaraClient, session_id, message: str, name: str) -> None:
        reply = f"Goodbye for now, {name}. It was lovely talking with you."
        self.stdout.write(f"Clara: {reply}")
        try:
            client.store_exchange(session_id, message, reply, intent="goodbye")
        except ClaraApiError as exc:
            self.stderr.write(f"(The goodbye was not stored: {exc.detail})")
