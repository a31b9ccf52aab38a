"""PDFs (the readable record, the clinician report): limited per login, rendered off the web
process's CPU.

A WeasyPrint render takes about 3 s of pure-Python CPU. Run in a web thread, it held the
process's GIL for those seconds, and eight at once slowed the bot's /context from 0.07 s to
2.6 s. So:
- A web process lets at most CLARA_PDF_MAX_WAITING requests wait for a render at once (2 of
  gunicorn's 4 threads by default), so the bot keeps the other threads. The place is taken
  first (`render_slot`); without one the request gets a 503 page with Retry-After at once,
  having built nothing, spent nothing and written nothing.
- Each login may ask for CLARA_PDF_RENDERS_PER_HOUR PDFs an hour, both kinds together (the
  sliding window of clara/ratelimit.py, shared by every web process). Past it: a 429 page with
  Retry-After, and the refusal is in the audit (object id "...rate-limited"); within it the
  download is audited as every export is.
- The HTML is built in the web thread (database reads, the access rules and the
  minimum-necessary choices stay where they are), and only HTML -> PDF, the slow part, goes to
  a pool of processes of its own (CLARA_PDF_WORKERS per web process, 1 by default), started
  with `spawn` at nice 19 (dashboard/pdf_renderer.py), so the render never takes the web
  process's GIL and the kernel gives the bot's requests the CPU first. The web thread waits for
  the bytes without using CPU.

Why a pool and not a Celery task with a polled download: the task would need a stored copy of
the PDF (encrypted, per login, deleted after download or expiry), a polling page and a worker
on a queue of its own, for the same isolation of the CPU (bench/pdf_load.py measures it). The
pool keeps the download what it was: one request, the bytes in its answer, nothing stored, so
there is no file another login or organisation could reach. Its cost: a waiting request holds
a web thread, which `render_slot` bounds.
"""

from __future__ import annotations

import math
import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from clara import ratelimit
from dashboard import pdf_renderer
from dashboard.access import Access, audit_record

WINDOW_SECONDS = 3600
RENDERER_NICENESS = pdf_renderer.NICENESS


class Busy(Exception):
    """Every render slot of this web process is taken (or the renderer failed)."""


_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None
_waiting = 0


def _pool() -> ProcessPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            # spawn: a fork would copy the web process's threads, locks and database connections.
            _executor = ProcessPoolExecutor(
                max_workers=max(1, settings.CLARA_PDF_WORKERS),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=pdf_renderer.start,
            )
        return _executor


def _forget_pool(broken: ProcessPoolExecutor) -> None:
    global _executor
    with _lock:
        if _executor is broken:
            _executor = None
    broken.shutdown(wait=False, cancel_futures=True)


@contextmanager
def render_slot() -> Iterator[None]:
    """One of this web process's CLARA_PDF_MAX_WAITING places for a request that waits for a
    render; raises Busy when all are taken. Taken before anything else (the limit, the audit,
    the HTML), so a busy answer costs the web process next to nothing and spends nothing."""
    global _waiting
    with _lock:
        if _waiting >= settings.CLARA_PDF_MAX_WAITING:
            raise Busy
        _waiting += 1
    try:
        yield
    finally:
        with _lock:
            _waiting -= 1


def html_to_pdf(html: str) -> bytes:
    """The PDF of `html`, rendered in the renderer pool (call it inside `render_slot`); raises
    Busy when the render failed or took longer than CLARA_PDF_TIMEOUT_SECONDS."""
    pool = _pool()
    try:
        return pool.submit(pdf_renderer.html_to_pdf, html).result(
            timeout=settings.CLARA_PDF_TIMEOUT_SECONDS
        )
    except BrokenProcessPool as exc:  # a renderer died (memory, a signal): start afresh
        _forget_pool(pool)
        raise Busy from exc
    except FutureTimeout as exc:
        raise Busy from exc


def renderer_niceness() -> int:
    """The renderers' nice value (for the tests: they run below the web process)."""
    return _pool().submit(pdf_renderer.niceness).result(timeout=settings.CLARA_PDF_TIMEOUT_SECONDS)


def limit_refusal(
    request: HttpRequest, *, access: Access, action: str, object_id: str = ""
) -> HttpResponse | None:
    """Counts one PDF for this login: None within CLARA_PDF_RENDERS_PER_HOUR (the download is
    audited, as every export), else a 429 page with Retry-After (the refusal audited)."""
    decision = ratelimit.hit(
        client_id=f"pdf:{settings.CLARA_RATE_LIMIT_SCOPE}:{request.user.pk}",
        limit=settings.CLARA_PDF_RENDERS_PER_HOUR,
        window=WINDOW_SECONDS,
    )
    audit_record(
        user=request.user,
        person_id=access.person.id,
        action=action,
        object_id=object_id if decision.allowed else f"{object_id}+rate-limited".lstrip("+"),
        allowed=decision.allowed,
        organisation_id=access.person.organisation_id,
    )
    if decision.allowed:
        return None
    minutes = max(1, math.ceil(decision.retry_after / 60))
    return _wait_page(
        request,
        status=429,
        retry_after=decision.retry_after,
        message=(
            f"You have asked for {decision.limit} PDFs in the last hour, the most one login may. "
            f"Please try again in about {minutes} minute{'s' if minutes != 1 else ''}."
        ),
    )


def busy_page(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: this web process already has its share of PDFs in the making."""
    return _wait_page(
        request,
        status=503,
        retry_after=30,
        message="Other PDFs are being made right now. Please try again in half a minute.",
    )


def _wait_page(request: HttpRequest, *, status: int, retry_after: int, message: str):
    response = render(
        request,
        "dashboard/error.html",
        {"title": "Please wait a little", "text": message},
        status=status,
    )
    response["Retry-After"] = str(max(1, int(retry_after)))
    response["Cache-Control"] = "no-store"
    return response
