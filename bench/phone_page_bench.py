#!/usr/bin/env python
"""Benchmark (not a test): the person page on Chromium's mid-range-phone emulation (issue 18).

    .venv/bin/python bench/phone_page_bench.py            # 3 runs each, medians
    .venv/bin/python bench/phone_page_bench.py --runs 5

Serves the demo as `make run` does: `prepare_run` into its own SQLite file
(data/bench/phone/clara.sqlite3, reused; delete it to rebuild), `collectstatic` into its own
STATIC_ROOT, then `runserver --nostatic` with STATIC_COLLECTED=1 (WhiteNoise, gzip). Debian's
/usr/bin/chromium through Playwright, at 390×844, throttled over the DevTools protocol as the
issue asks: 4× CPU slowdown (Emulation.setCPUThrottlingRate), 9 Mbit/s down and up and 150 ms
latency (Network.emulateNetworkConditions).

Logged in first (not timed). Then, per run: "first visit" clears the browser cache and opens
the person page; "cached" opens it again. Each time is from navigation start until the page and
its six htmx panels have arrived and every chart is drawn (no `.loading` left, one Plotly svg
per chart). Also prints the bytes transferred on the first visit. Targets: ≤ 6 s and ≤ 3 s.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "data" / "bench" / "phone"
PY = str(ROOT / ".venv" / "bin" / "python")
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "phone-bench-password"
PHONE = {"width": 390, "height": 844}
MBIT = 1_000_000 / 8  # bytes per second
TARGETS = {"first visit": 6.0, "cached": 3.0}
SETTLED = """() => {
  if (document.readyState !== 'complete') return false;
  if (document.querySelector('.loading, .htmx-request')) return false;
  const charts = document.querySelectorAll('script[data-chart]').length;
  return charts > 0 && [...document.querySelectorAll('.chart')].filter(c => c.querySelector('svg.main-svg')).length === charts;
}"""


def _env() -> dict:
    return {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{HERE / 'clara.sqlite3'}",
        "STATIC_ROOT": str(HERE / "static"),
        "PYTHONUNBUFFERED": "1",
    }


def prepare() -> None:
    HERE.mkdir(parents=True, exist_ok=True)
    env = _env()
    if not (HERE / "clara.sqlite3").exists():
        print("preparing the demo database (once)…", flush=True)
        subprocess.run(
            [PY, "manage.py", "prepare_run"],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
    subprocess.run(
        [PY, "manage.py", "create_demo_caregivers", "--password", PASSWORD],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    subprocess.run(
        [PY, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=ROOT,
        env={**env, "STATIC_COLLECTED": "1"},
        check=True,
    )


def serve() -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [
            PY,
            "manage.py",
            "runserver",
            f"127.0.0.1:{port}",
            "--noreload",
            "--skip-checks",
            "--nostatic",
        ],
        cwd=ROOT,
        env={**_env(), "STATIC_COLLECTED": "1"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(url + "/login/", timeout=2)
            return server, url
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit("the server did not start")


def measure(runs: int, base: str) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    times: dict[str, list[float]] = {"first visit": [], "cached": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--disable-background-networking",
                "--no-first-run",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        context = browser.new_context(
            viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2.625
        )
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(base + "/login/")
        page.fill("#id_username", "demo")
        page.fill("#id_password", PASSWORD)
        page.click("button.primary")
        page.wait_for_url(base + "/")
        target = base + page.locator("a.card").first.get_attribute("href")
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send(
            "Network.emulateNetworkConditions",
            {
                "offline": False,
                "latency": 150,
                "downloadThroughput": 9 * MBIT,
                "uploadThroughput": 9 * MBIT,
            },
        )
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        transferred = []
        for _ in range(runs):
            for kind in ("first visit", "cached"):
                if kind == "first visit":
                    cdp.send("Network.clearBrowserCache")
                page.goto(target, wait_until="commit")
                page.wait_for_function(SETTLED, polling=50, timeout=120_000)
                elapsed = page.evaluate("performance.now()") / 1000
                times[kind].append(elapsed)
                if kind == "first visit":
                    transferred.append(
                        page.evaluate(
                            "performance.getEntriesByType('navigation').concat("
                            "performance.getEntriesByType('resource'))"
                            ".reduce((n, e) => n + (e.transferSize || 0), 0)"
                        )
                    )
                print(f"  {kind}: {elapsed:.2f} s", flush=True)
        browser.close()
    times["bytes"] = transferred
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    prepare()
    server, base = serve()
    try:
        times = measure(args.runs, base)
    finally:
        server.terminate()
        server.wait(timeout=20)
    print(f"\nPerson page, 390×844, 4× CPU slowdown, 9 Mbit/s, 150 ms ({args.runs} runs each):")
    for kind, target in TARGETS.items():
        median = statistics.median(times[kind])
        verdict = "meets" if median <= target else "MISSES"
        print(f"  {kind:12} median {median:5.2f} s (target ≤ {target:.0f} s: {verdict})")
    print(f"  transferred on a first visit: {statistics.median(times['bytes']) / 1e6:.2f} MB")
    sys.exit(0)


if __name__ == "__main__":
    main()
