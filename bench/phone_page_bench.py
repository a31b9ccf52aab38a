#!/usr/bin/env python
"""Benchmark (not a test): the person page on Chromium's mid-range-phone emulation (issue 18).

    .venv/bin/python bench/phone_page_bench.py            # 3 runs each, medians
    .venv/bin/python bench/phone_page_bench.py --runs 5
    .venv/bin/python bench/phone_page_bench.py --runs 5 --baseline d2f1391   # before/after

With `--baseline REV` the code of that git revision (exported with `git archive` under
$CLARA_BENCH_DIR, default data/bench/phone) is served beside this checkout, on the same database,
and the runs alternate: baseline first visit, baseline cached, this first visit, this cached.

Serves the demo as `make run` does: `prepare_run` into its own SQLite file
(data/bench/phone/clara.sqlite3, reused; delete it to rebuild), `collectstatic` into its own
STATIC_ROOT, then `runserver --nostatic` with STATIC_COLLECTED=1 (WhiteNoise, gzip). Debian's
/usr/bin/chromium through Playwright, at 390×844, throttled over the DevTools protocol as the
issue asks: 4× CPU slowdown (Emulation.setCPUThrottlingRate), 9 Mbit/s down and up and 150 ms
latency (Network.emulateNetworkConditions).

Logged in first (not timed). Then, per run: "first visit" clears the browser cache and opens
the person page; "cached" opens it again. Three times are taken from navigation start, in one
visit:
- "first screen": the page and its six htmx panels have arrived (no `.loading` left) and every
  chart whose place is on the screen is drawn (a Plotly svg);
- "first chart": also the first chart of the page (the feelings over time) is drawn, the page
  scrolled to it if it is not near the screen (notes and alerts come first, so on a phone it is
  two screens down); the figure compared with the targets, since it includes compiling plotly.js;
- "all charts": then the page is scrolled chart by chart to the end and all six are drawn
  (charts.js draws a chart only when it comes near the screen; the scrolling is in the time).
Also prints the bytes transferred on the first visit. Targets: ≤ 6 s and ≤ 3 s (first chart).
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
# The chart of a `script[data-chart]` is the element after its caption (both versions of
# charts.js); before it exists, its place is the script's parent.
FIRST_SCREEN = """() => {
  if (document.readyState !== 'complete') return false;
  if (document.querySelector('.loading, .htmx-request')) return false;
  const chartOf = s => s.nextElementSibling && s.nextElementSibling.nextElementSibling;
  const onScreen = [...document.querySelectorAll('script[data-chart]')].filter(s => {
    const box = (chartOf(s) || s.parentElement).getBoundingClientRect();
    return box.top < innerHeight && box.bottom > 0;
  });
  return onScreen.every(s => chartOf(s) && chartOf(s).querySelector('svg.main-svg'));
}"""
FIRST_CHART = """async () => {
  const first = document.querySelector('script[data-chart]');
  const chartOf = () => first && first.nextElementSibling && first.nextElementSibling.nextElementSibling;
  const drawn = () => !!(chartOf() && chartOf().querySelector('svg.main-svg'));
  if (!drawn() && chartOf()) chartOf().scrollIntoView({block: 'center'});
  while (!drawn()) await new Promise(done => setTimeout(done, 50));
  return performance.now();
}"""
ALL_CHARTS = """async () => {
  for (const chart of document.querySelectorAll('.chart')) {
    chart.scrollIntoView({block: 'center'});
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
  }
  const drawn = () => [...document.querySelectorAll('.chart')]
    .filter(c => c.querySelector('svg.main-svg')).length;
  const charts = document.querySelectorAll('script[data-chart]').length;
  while (drawn() < charts) await new Promise(done => setTimeout(done, 50));
  return performance.now();
}"""
KINDS = ("first screen", "first chart", "all charts")


BENCH_DIR = Path(os.environ.get("CLARA_BENCH_DIR") or HERE)


def _env(static: Path = HERE / "static") -> dict:
    return {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{HERE / 'clara.sqlite3'}",
        "STATIC_ROOT": str(static),
        "PYTHONUNBUFFERED": "1",
    }


def baseline_tree(rev: str) -> Path:
    """The code of `rev`, exported once under BENCH_DIR (served beside this checkout)."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()
    tree = BENCH_DIR / f"phone-baseline-{sha}"
    if not (tree / "manage.py").exists():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", sha], cwd=ROOT, check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    subprocess.run(
        [PY, "manage.py", "collectstatic", "--noinput", "--verbosity", "0"],
        cwd=tree,
        env={**_env(tree / "static-collected"), "STATIC_COLLECTED": "1"},
        check=True,
    )
    return tree


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


def serve(code: Path = ROOT) -> tuple[subprocess.Popen, str]:
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
        cwd=code,
        env={
            **_env(HERE / "static" if code == ROOT else code / "static-collected"),
            "STATIC_COLLECTED": "1",
        },
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


def measure(runs: int, bases: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    """Per served code ("this", maybe "baseline"): first-visit and cached times, and bytes."""
    from playwright.sync_api import sync_playwright

    times = {
        name: {f"{visit}, {kind}": [] for visit in ("first visit", "cached") for kind in KINDS}
        | {"bytes": []}
        for name in bases
    }
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
        targets = {}
        for name, base in bases.items():
            # Both servers share the database (and so the session) and the host's cookies.
            page.goto(base + "/")
            if "/login/" in page.url:
                page.fill("#id_username", "demo")
                page.fill("#id_password", PASSWORD)
                page.click("button.primary")
                page.wait_for_url(base + "/")
            targets[name] = base + page.locator("a.card").first.get_attribute("href")
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
        for _ in range(runs):
            for name, target in targets.items():
                for visit in ("first visit", "cached"):
                    if visit == "first visit":
                        cdp.send("Network.clearBrowserCache")
                    page.goto(target, wait_until="commit")
                    page.wait_for_function(FIRST_SCREEN, polling=50, timeout=120_000)
                    screen = page.evaluate("performance.now()") / 1000
                    first = page.evaluate(FIRST_CHART) / 1000
                    every = page.evaluate(ALL_CHARTS) / 1000
                    for kind, elapsed in zip(KINDS, (screen, first, every), strict=True):
                        times[name][f"{visit}, {kind}"].append(elapsed)
                    if visit == "first visit":
                        times[name]["bytes"].append(
                            page.evaluate(
                                "performance.getEntriesByType('navigation').concat("
                                "performance.getEntriesByType('resource'))"
                                ".reduce((n, e) => n + (e.transferSize || 0), 0)"
                            )
                        )
                    print(
                        f"  {name} {visit}: screen {screen:.2f} s, first chart {first:.2f} s,"
                        f" all charts {every:.2f} s",
                        flush=True,
                    )
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="a git revision to serve beside this one, alternating")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    prepare()
    codes = {"this": ROOT}
    if args.baseline:
        codes = {"baseline": baseline_tree(args.baseline), "this": ROOT}
    servers, bases = [], {}
    try:
        for name, code in codes.items():
            server, bases[name] = serve(code)
            servers.append(server)
        times = measure(args.runs, bases)
    finally:
        for server in servers:
            server.terminate()
            server.wait(timeout=20)
    print(f"\nPerson page, 390×844, 4× CPU slowdown, 9 Mbit/s, 150 ms ({args.runs} runs each):")
    for name, measured in times.items():
        for visit, target in TARGETS.items():
            for kind in KINDS:
                runs = measured[f"{visit}, {kind}"]
                verdict = ""
                if kind == "first chart":
                    verdict = f"; target ≤ {target:.0f} s: " + (
                        "meets" if statistics.median(runs) <= target else "MISSES"
                    )
                print(
                    f"  {name:8} {visit:11} {kind:12} median {statistics.median(runs):5.2f} s"
                    f" (runs {', '.join(f'{t:.2f}' for t in runs)}{verdict})"
                )
        megabytes = statistics.median(measured["bytes"]) / 1e6
        print(f"  {name:8} transferred on a first visit: {megabytes:.2f} MB")
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    sys.exit(0)


if __name__ == "__main__":
    main()
