"""`manage.py mcp_server`: Clara's memory tools for MCP clients, over stdio or streamable HTTP."""

import os

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError, connection

from memory.conversations import services


class Command(BaseCommand):
    help = (
        "Serve the memory tools over MCP. stdio: the API key comes from CLARA_API_KEY and is "
        "checked before serving. http: every request sends 'Authorization: Bearer <key>'."
    )
    # An MCP client may start a stdio server for every conversation, so start fast: the checks
    # load every URL and view (plotly included) that this server never serves.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument("--host", default="127.0.0.1", help="http only (default 127.0.0.1)")
        parser.add_argument("--port", type=int, default=8765, help="http only (default 8765)")

    def handle(self, *args, transport: str, host: str, port: int, **options) -> None:
        # Nothing may go to stdout here: over stdio it is the protocol's channel.
        if transport == "stdio":
            raw_key = self._checked_key()
            from memory.companion import (
                mcp as mcp_server,  # the SDK takes a while to import; refuse first
            )

            mcp_server.run_stdio(raw_key=raw_key)
            return
        if not 0 < port < 65536:
            raise CommandError(f"--port must be between 1 and 65535, not {port}.")
        from memory.companion import mcp as mcp_server

        self.stderr.write(f"Clara MCP server on http://{host}:{port}{mcp_server.HTTP_PATH}")
        mcp_server.run_http(host=host, port=port)

    def _checked_key(self) -> str:
        """CLARA_API_KEY, if it is a live key; otherwise the command stops with why."""
        raw_key = os.environ.get("CLARA_API_KEY", "").strip()
        if not raw_key:
            raise CommandError(
                "CLARA_API_KEY is not set. Create a key with `manage.py create_api_key NAME` "
                "and put it in the MCP client's environment for this server."
            )
        try:
            key = services.api_key_authenticate(raw_key=raw_key)
        except DatabaseError as exc:
            raise CommandError(f"Cannot reach the database to check the key: {exc}") from None
        finally:
            connection.close()
        if key is None:
            raise CommandError(
                "CLARA_API_KEY is not a live API key (wrong or revoked). Create one with "
                "`manage.py create_api_key NAME`."
            )
        self.stderr.write(f"Clara MCP server on stdio, API key {key.prefix}…")
        return raw_key
