"""What MCP adds to a memory tool call: in-process vs the MCP server over stdio and HTTP.

Builds a throwaway SQLite database (migrated, one person with a session and `--facts` memories),
then times the same tool calls three ways: `agent_tools.call` in this process, and through
`manage.py mcp_server` over stdio and over streamable HTTP (2026-07-28 protocol and the legacy
handshake) with the SDK's own client. Prints one markdown table of medians and 95th percentiles,
and the server start-up time (spawn to the first `tools/list` answer). A benchmark, not a test:
it asserts nothing about speed.

    .venv/bin/python bench/mcp_bench.py              # 100 calls per tool and transport
    .venv/bin/python bench/mcp_bench.py --calls 300 --facts 1000
"""

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _setup_django(tmp: Path) -> dict[str, str]:
    env = {
        "DEBUG": "1",
        "CLARA_DATA_DIR": str(tmp),
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "REDIS_URL": "",
        # The bench makes more calls a minute than the default budget of one key allows.
        "CLARA_API_RATE_LIMIT_PER_MINUTE": "0",
    }
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return {**os.environ, **env}


def _seed(facts: int) -> dict[str, str]:
    from memory.companion import tools as agent_tools
    from memory.conversations import services, tenancy

    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), user_id=uuid.uuid4(), display_name="Nana"
    )
    for i in range(facts):
        agent_tools.call(
            "upsert_memory",
            {
                "person_id": str(session.person_id),
                "content": f"Fact {i}: she grew roses number {i} in the garden",
                "memory_key": f"bench|fact|{i}",
            },
            caller=tenancy.default_caller(),
        )
    _, raw_key = services.api_key_create(name="mcp bench")
    return {"person_id": str(session.person_id), "session_id": str(session.id), "key": raw_key}


def _calls(seed: dict[str, str]) -> dict[str, callable]:
    """Each tool's arguments, fresh per call (upserts get a new fact each time)."""
    counter = iter(range(10**9))
    return {
        "search_memory": lambda: {"person_id": seed["person_id"], "query": "roses garden"},
        "upsert_memory": lambda: {
            "person_id": seed["person_id"],
            "content": f"New fact {next(counter)} about her cat Tom",
        },
        "get_context": lambda: {"session_id": seed["session_id"], "message": "Where is Tom?"},
    }


def _stats(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times) * 1000, times[int(len(times) * 0.95) - 1] * 1000


def _in_process(seed: dict[str, str], calls: int) -> dict[str, tuple[float, float]]:
    from memory.companion import tools as agent_tools
    from memory.conversations import tenancy

    caller = tenancy.default_caller()

    out = {}
    for name, arguments in _calls(seed).items():
        times = []
        for _ in range(calls):
            args = arguments()
            start = time.perf_counter()
            agent_tools.call(name, args, caller=caller, tools=agent_tools.MCP_TOOLS)
            times.append(time.perf_counter() - start)
        out[name] = _stats(times)
    return out


async def _through(client_factory, seed, calls) -> tuple[float, dict[str, tuple[float, float]]]:
    start = time.perf_counter()
    async with client_factory() as client:
        await client.list_tools()
        ready = time.perf_counter() - start
        out = {}
        for name, arguments in _calls(seed).items():
            times = []
            for _ in range(calls):
                args = arguments()
                start = time.perf_counter()
                result = await client.call_tool(name, args)
                times.append(time.perf_counter() - start)
                assert not result.is_error, result
            out[name] = _stats(times)
    return ready, out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=100, help="calls per tool and transport")
    parser.add_argument("--facts", type=int, default=300, help="memories stored for the person")
    options = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="clara-mcp-bench-"))
    try:
        env = _setup_django(tmp)
        seed = _seed(options.facts)
        from django.db import connection

        connection.close()  # the servers write to the same SQLite file

        import anyio
        import httpx2
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client
        from mcp.client.streamable_http import streamable_http_client

        rows = [("in process (agent_tools.call)", None, _in_process(seed, options.calls))]
        connection.close()

        log = open(tmp / "servers.log", "w")
        params = StdioServerParameters(
            command=sys.executable,
            args=["manage.py", "mcp_server", "--transport", "stdio"],
            env={**env, "CLARA_API_KEY": seed["key"]},
            cwd=str(ROOT),
        )
        ready, stats = anyio.run(
            _through, lambda: Client(stdio_client(params, errlog=log)), seed, options.calls
        )
        rows.append(("MCP stdio", ready, stats))

        port = _free_port()
        start = time.perf_counter()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "mcp_server", "--transport", "http", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                    break
                except OSError:
                    time.sleep(0.05)
            listening = time.perf_counter() - start
            url = f"http://127.0.0.1:{port}/mcp"
            for mode in ("auto", "legacy"):

                def factory(mode=mode):
                    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {seed['key']}"})
                    return Client(streamable_http_client(url, http_client=http), mode=mode)

                ready, stats = anyio.run(_through, factory, seed, options.calls)
                label = "MCP HTTP, 2026-07-28" if mode == "auto" else "MCP HTTP, handshake"
                rows.append((label, listening + ready if mode == "auto" else ready, stats))
        finally:
            server.terminate()
            server.wait()
            log.close()

        load = os.getloadavg()[0]
        print(f"\n{options.calls} calls per tool, {options.facts} facts, SQLite, load {load:.1f}")
        print("\n| path | start-up s | search_memory p50 / p95 ms | upsert_memory | get_context |")
        print("|---|---|---|---|---|")
        for label, ready, stats in rows:
            cells = [f"{stats[name][0]:.1f} / {stats[name][1]:.1f}" for name in stats]
            start_up = "—" if ready is None else f"{ready:.2f}"
            print(f"| {label} | {start_up} | " + " | ".join(cells) + " |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
