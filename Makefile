# Clara Memory. `make run` serves a demo on a fresh clone (web, worker and scheduler); `make test`
# runs the suite.
PY := .venv/bin/python
UV_VERSION := 0.13.9
PORT ?= 8000
export PORT

.PHONY: install run test lint bench bench-quick bench-search clean

# The virtualenv is rebuilt when the dependencies or the lock file change.
.venv/.synced: pyproject.toml uv.lock
	test -x $(PY) || python3 -m venv .venv
	$(PY) -m pip install --quiet --disable-pip-version-check "uv==$(UV_VERSION)"
	.venv/bin/uv sync --frozen --inexact --quiet
	touch $@

install: .venv/.synced

run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py replay_recovery_log
	$(PY) manage.py load_demo --if-empty
	$(PY) manage.py create_demo_caregivers
	$(PY) manage.py compute_trends
	$(PY) manage.py create_api_key "make run"
	@# Web, worker and scheduler together (Procfile.dev); Ctrl-C stops all three, and so does one
	@# of them exiting. honcho kills what is still running after KILL_WAIT; the worker on the
	@# embedded broker takes up to ~7 s to stop cleanly, so it gets 20. --env /dev/null: settings
	@# come from the environment only, as for the commands above.
	PYTHONUNBUFFERED=1 $(PY) -c 'import sys, honcho.command, honcho.manager; honcho.manager.KILL_WAIT = 20; sys.exit(honcho.command.main())' \
		start --env /dev/null --procfile Procfile.dev --port $(PORT)

test: install
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest

lint: install
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

bench: install
	$(PY) bench/memory_bench.py

bench-quick: install
	$(PY) bench/memory_bench.py --quick

# Long-term memory search against LangGraph's stores and mem0 (the `bench` dependency group, never
# imported by the product).
# The LoCoMo evaluation file (not shipped): LOCOMO=path/to/file.json make bench-search
LOCOMO ?= ../shared/data/locomo/locomo_dev.json
bench-search: install
	.venv/bin/uv sync --frozen --inexact --quiet --group bench
	$(PY) bench/search_bench.py --data $(LOCOMO)

clean:
	rm -rf .venv data staticfiles .pytest_cache
