#!/usr/bin/env python
"""Benchmark (not a test): how long from the exchange that raises an urgent alert to its e-mail
arriving at an SMTP server and its webhook at an HTTP receiver, through a real Celery worker.

    .venv/bin/python bench/alert_delivery_bench.py                       # embedded broker (make run's)
    REDIS_URL=redis://127.0.0.1:6379/1 .venv/bin/python bench/alert_delivery_bench.py   # Redis
    .venv/bin/python bench/alert_delivery_bench.py --alerts 20

A fresh SQLite database and broker folder under a temporary directory; an aiosmtpd server and
tests/support/http_receiver.py on loopback; one `celery worker --pool solo` (as `make run`
starts it). Each round opens a new session for the person and stores an exchange with a fall
through `exchange_record` (the bot API's write), whose commit queues the delivery job. The clock
starts just before the write and stops when the e-mail, then the signed webhook, have arrived.
Prints the median and the worst of each, and whether the issue's 30 s target is met.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 30


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alerts", type=int, default=10)
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from tests.support.http_receiver import HttpReceiver
    from tests.support.smtp_server import SmtpServer

    tmp = Path(tempfile.mkdtemp(prefix="clara-alert-bench-"))
    broker = "redis" if os.environ.get("REDIS_URL") else "embedded"
    with SmtpServer() as smtp, HttpReceiver() as receiver:
        os.environ.update(
            DEBUG="1",
            CLARA_DATA_DIR=str(tmp),
            DATABASE_URL=f"sqlite:///{tmp / 'bench.sqlite3'}",
            EMAIL_HOST=smtp.host,
            EMAIL_PORT=str(smtp.port),
            DJANGO_SETTINGS_MODULE="clara.settings",
        )
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.db import connection

        from clara.celery import app
        from dashboard.models import CareRole, CareTeamMembership
        from memory.conversations import services, tenancy
        from memory.models import OrganisationMembership, Person
        from memory.webhooks import services as webhooks

        call_command("migrate", verbosity=0)
        organisation = tenancy.organisation_get_or_create("bench", name="Bench care")
        webhooks.webhook_create(
            organisation_id=organisation.pk, url=receiver.url, events=["alert.raised"]
        )
        person_id = uuid.uuid4()
        services.session_resolve(
            user_id=person_id, display_name="Margaret", organisation_id=organisation.pk
        )
        user = get_user_model().objects.create_user("nurse", email="nurse@bench.example")
        OrganisationMembership.objects.create(user=user, organisation=organisation)
        CareTeamMembership.objects.create(
            user=user, person=Person.objects.get(id=person_id), role=CareRole.STAFF
        )
        connection.close()

        log = open(tmp / "worker.log", "w")  # noqa: SIM115 - kept open for the worker's life
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "clara", "worker", "--pool", "solo", "-l"]
            + ["info", "--without-mingle", "--without-gossip", "--without-heartbeat"],
            cwd=ROOT,
            env=os.environ.copy(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            started = time.monotonic()
            app.send_task("memory.tasks.ping").get(timeout=180)
            print(f"worker ready after {time.monotonic() - started:.1f} s ({broker} broker)")
            mail_delays, hook_delays = [], []
            for _ in range(args.alerts):
                mails, hooks = len(smtp.messages), len(receiver.requests)
                session, _ = services.session_resolve(
                    user_id=person_id, session_id=uuid.uuid4(), organisation_id=organisation.pk
                )
                t0 = time.monotonic()
                services.exchange_record(
                    session_id=session.id,
                    user_message="I've fallen and I can't get up",
                    assistant_message="I'm getting someone for you.",
                    organisation_id=organisation.pk,
                )
                connection.close()
                mail_at = hook_at = None
                while (mail_at is None or hook_at is None) and time.monotonic() - t0 < 120:
                    now = time.monotonic()
                    if mail_at is None and len(smtp.messages) > mails:
                        mail_at = now - t0
                    if hook_at is None and len(receiver.requests) > hooks:
                        hook_at = now - t0
                    time.sleep(0.01)
                mail_delays.append(mail_at if mail_at is not None else float("inf"))
                hook_delays.append(hook_at if hook_at is not None else float("inf"))
        finally:
            worker.terminate()
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
            log.close()

    load = os.getloadavg()[0]
    print("\n| broker | alerts | e-mail median | e-mail worst | webhook median | webhook worst |")
    print("|---|---|---|---|---|---|")
    print(
        f"| {broker} | {args.alerts} | {statistics.median(mail_delays):.2f} s | "
        f"{max(mail_delays):.2f} s | {statistics.median(hook_delays):.2f} s | "
        f"{max(hook_delays):.2f} s |"
    )
    worst = max(max(mail_delays), max(hook_delays))
    verdict = "met" if worst <= TARGET_SECONDS else "NOT met"
    print(
        f"\n30 s target {verdict} (worst {worst:.2f} s); load average {load:.1f} on {os.cpu_count()} cores"
    )


if __name__ == "__main__":
    main()
