"""Run LangGraph's own store tests against ClaraStore, and against InMemoryStore for comparison.

    .venv/bin/python tests/langgraph_conformance/run.py            # both targets, then compare
    .venv/bin/python tests/langgraph_conformance/run.py --target clara -- -x -k ttl

The tests come from the sdists of the LangGraph packages uv.lock pins (langgraph-checkpoint:
tests/test_store.py; langgraph-checkpoint-sqlite: tests/test_store.py, test_async_store.py,
test_ttl.py), fetched from PyPI with pip into a temporary directory and checked against
uv.lock's sha256, so they are the released tests of the versions Clara runs with. They are not
kept in this repository: bumping the pins brings their tests along.

Retargeting changes only the lines that import the store (RETARGET below): the tests then build
their stores from clara_conformance.py, which hands them a ClaraStore over an empty database
(or, for the baseline, an InMemoryStore). Every assertion runs as LangGraph wrote it. Tests that
build no store (LangGraph's helpers) or read SQLite internals are left out (NOT_APPLICABLE).

The run fails when ClaraStore fails a case InMemoryStore passes, or a case that KNOWN_DIFFERENCES
does not list (a listed case that passes is reported, so the list can shrink).
"""

import argparse
import hashlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import urllib.request
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

# package -> the test files of its sdist that test a store
PACKAGES = {
    "langgraph-checkpoint": ["tests/test_store.py"],
    "langgraph-checkpoint-sqlite": [
        "tests/test_store.py",
        "tests/test_async_store.py",
        "tests/test_ttl.py",
    ],
}

# The only edits: (package, file) -> [(line as released, line as run)]. Each must match once.
RETARGET = {
    ("langgraph-checkpoint", "tests/test_store.py"): [
        (
            "from langgraph.store.memory import InMemoryStore",
            "from clara_conformance import InMemoryStore",
        ),
    ],
    ("langgraph-checkpoint-sqlite", "tests/test_store.py"): [
        (
            "from langgraph.store.sqlite import SqliteStore",
            "from clara_conformance import SqliteStore",
        ),
    ],
    ("langgraph-checkpoint-sqlite", "tests/test_async_store.py"): [
        (
            "from langgraph.store.sqlite import AsyncSqliteStore",
            "from clara_conformance import AsyncSqliteStore",
        ),
    ],
    ("langgraph-checkpoint-sqlite", "tests/test_ttl.py"): [
        (
            "from langgraph.store.sqlite import SqliteStore",
            "from clara_conformance import SqliteStore",
        ),
        (
            "from langgraph.store.sqlite.aio import AsyncSqliteStore",
            "from clara_conformance import AsyncSqliteStore",
        ),
    ],
}

# Tests that build no store, or test SqliteStore's SQL: they say nothing about a store.
NOT_APPLICABLE = {
    "langgraph-checkpoint": {
        "tests/test_store.py": [
            "test_dedupe_ops_maps_repeated_reads_and_puts_to_one_op",  # the batching helper
            "test_get_text_at_path",  # the field-path helper
            "test_get_text_at_path_with_non_dict_mapping",
            "test_async_batch_store",  # a mock store
            "test_async_batch_store_handles_cancellation",  # a mock store
            "test_validate_op_namespace_rejects_invalid_labels",  # the label helper
            "test_validate_op_namespace_allows_empty_prefix_and_wildcards",
        ],
    },
    "langgraph-checkpoint-sqlite": {
        "tests/test_store.py": [
            "test_nonnull_migrations",  # SqliteStore's migration list
            "test_escape_glob_literal",  # SqliteStore's SQL helpers
            "test_namespace_match_pattern",
            "test_list_namespaces_prefix_uses_indexable_condition",
        ],
    },
}

# Cases ClaraStore fails on purpose, and why (docs/langgraph.md says more). Keys are
# "package file::test" (any parameters) or "package file::test[params]".
KNOWN_DIFFERENCES = {
    "langgraph-checkpoint-sqlite tests/test_store.py::test_vector_store_initialization": (
        "reads SqliteStore's own settings (`text_fields`), SQLite connection and vector tables"
    ),
    "langgraph-checkpoint-sqlite tests/test_store.py::test_sql_injection_vulnerability": (
        "SqliteStore refuses filter keys that are not [A-Za-z0-9_.-] because it builds SQL "
        "from them; ClaraStore matches filters in Python and accepts any key"
    ),
    "langgraph-checkpoint-sqlite tests/test_async_store.py::test_no_running_loop": (
        "AsyncSqliteStore refuses sync calls on the event loop's thread; ClaraStore, like "
        "InMemoryStore and PostgresStore, serves them"
    ),
}


def locked(package: str) -> tuple[str, str, str]:
    """(version, sdist URL, sdist sha256) of a package in uv.lock."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    for entry in lock["package"]:
        if entry["name"] == package:
            sdist = entry["sdist"]
            return entry["version"], sdist["url"], sdist["hash"].removeprefix("sha256:")
    sys.exit(f"{package} is not in uv.lock")


def fetch(package: str, url: str, sha256: str, into: Path, sdist_dir: Path | None) -> Path:
    """The package's sdist, from `sdist_dir` if it is there, else from the URL uv.lock
    names (the package index). The venv has no pip, so this reads the URL itself."""
    path = (sdist_dir or into) / url.rsplit("/", 1)[-1]
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        with urllib.request.urlopen(url, timeout=120) as response:  # noqa: S310 - uv.lock's https URL
            partial = path.with_suffix(".part")
            partial.write_bytes(response.read())
            partial.replace(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        sys.exit(f"{path}: sha256 {digest}, uv.lock says {sha256}")
    return path


def unpack(package: str, sdist: Path, into: Path) -> Path:
    """The sdist's tests/ folder under into/<package>/, retargeted."""
    out = into / package
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        members = [m for m in tar.getmembers() if m.name.startswith(f"{top}/tests/")]
        tar.extractall(into, members=members, filter="data")
    shutil.move(into / top, out)
    for (pkg, file), edits in RETARGET.items():
        if pkg != package:
            continue
        source = (out / file).read_text()
        for old, new in edits:
            count = len(re.findall(rf"^{re.escape(old)}$", source, flags=re.M))
            if count != 1:
                sys.exit(f"{package} {file}: expected one line {old!r}, found {count}")
            source = re.sub(rf"^{re.escape(old)}$", new, source, flags=re.M)
        (out / file).write_text(source)
    skip = NOT_APPLICABLE.get(package, {})
    (out / "pytest.ini").write_text(
        "[pytest]\n"
        "# LangGraph's settings for these tests (their pyproject.toml), and Clara's Django.\n"
        "asyncio_mode = auto\n"
        "asyncio_default_fixture_loop_scope = function\n"
        "DJANGO_SETTINGS_MODULE = clara.settings\n"
        "addopts = --strict-markers -p clara_conformance -p no:cacheprovider\n"
        "clara_not_applicable =\n"
        + "".join(f"    {file}::{name}\n" for file, names in skip.items() for name in names)
    )
    return out


def run(package: str, folder: Path, target: str, extra: list[str]) -> dict[str, str]:
    """Run the package's store tests; returns {"file::test[params]": "passed" | "failed"}."""
    report = folder / f"report-{target}.xml"
    env = dict(os.environ)
    env["CLARA_CONFORMANCE_TARGET"] = target
    env["PYTHONPATH"] = os.pathsep.join(
        [str(HERE), str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    print(f"\n== {package}: LangGraph's store tests on {label(target)}", flush=True)
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", f"--junitxml={report}"]
        + ["-o", "junit_family=xunit2", *PACKAGES[package], *extra],
        cwd=folder,
        env=env,
        check=False,
    )
    if not report.exists():
        sys.exit(f"{package}: pytest wrote no report")
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")
        cls = [part for part in module if part[:1].isupper()]
        file = "/".join(part for part in module if not part[:1].isupper()) + ".py"
        name = "::".join([*cls, case.get("name", "")])
        if case.find("skipped") is not None:
            outcome = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        else:
            outcome = "passed"
        # A setup error and a failure of the same case come as two entries: failed wins.
        key = f"{file}::{name}"
        if outcomes.get(key) != "failed":
            outcomes[key] = outcome
    return outcomes


def label(target: str) -> str:
    return {"clara": "ClaraStore", "inmemory": "InMemoryStore"}[target]


def known(package: str, case: str) -> str | None:
    for key in (f"{package} {case}", f"{package} {case.split('[')[0]}"):
        if key in KNOWN_DIFFERENCES:
            return KNOWN_DIFFERENCES[key]
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", choices=["clara", "inmemory", "both"], default="both")
    parser.add_argument("--sdist-dir", type=Path, help="use (or keep) the sdists here")
    parser.add_argument("--keep", type=Path, help="unpack the tests here and keep them")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args()
    targets = ["inmemory", "clara"] if args.target == "both" else [args.target]

    if args.keep:
        work = args.keep
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="langgraph-conformance-"))
    results: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    try:
        for package in PACKAGES:
            version, url, sha256 = locked(package)
            installed = importlib.metadata.version(package)
            if installed != version:
                sys.exit(f"{package} {installed} is installed, uv.lock pins {version}")
            sdist = fetch(package, url, sha256, work, args.sdist_dir)
            folder = unpack(package, sdist, work)
            for target in targets:
                results[package][target] = run(package, folder, target, args.pytest_args)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return report(results, targets)


def report(results, targets) -> int:
    print("\n== LangGraph's store tests: cases passed")
    print(f"{'file':58} " + " ".join(f"{label(t):>14}" for t in targets))
    totals = {t: [0, 0] for t in targets}
    for package, by_target in results.items():
        files = sorted(
            {case.split("::")[0] for outcomes in by_target.values() for case in outcomes}
        )
        for file in files:
            cells = []
            for t in targets:
                cases = [o for c, o in by_target[t].items() if c.split("::")[0] == file]
                passed = cases.count("passed")
                totals[t][0] += passed
                totals[t][1] += len(cases)
                cells.append(f"{passed:>6} of {len(cases):<5}")
            print(f"{package + ' ' + file:58} " + " ".join(cells))
    print(f"{'all':58} " + " ".join(f"{p:>6} of {n:<5}" for p, n in totals.values()))

    if "clara" not in targets:
        return 0
    problems = []
    for package, by_target in results.items():
        clara = by_target["clara"]
        baseline = by_target.get("inmemory", {})
        for case, outcome in sorted(clara.items()):
            reason = known(package, case)
            if outcome != "passed" and baseline.get(case) == "passed":
                problems.append(f"ClaraStore fails, InMemoryStore passes: {package} {case}")
            elif outcome != "passed" and reason is None:
                problems.append(f"ClaraStore fails (not a known difference): {package} {case}")
            elif outcome == "passed" and reason is not None:
                print(f"note: known difference now passes, drop it: {package} {case}")
    for package, by_target in results.items():
        for case, outcome in sorted(by_target["clara"].items()):
            reason = known(package, case)
            if outcome != "passed" and reason:
                print(f"known difference: {package} {case}: {reason}")
    for problem in problems:
        print(problem)
    passed, total = totals["clara"]
    if problems:
        print(f"\nClaraStore failed: {len(problems)} cases fail that should pass")
    else:
        print(
            f"\nClaraStore passed: {passed} of {total} LangGraph store cases; "
            f"the other {total - passed} are known differences"
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
