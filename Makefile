# Clara Memory. `make run` serves a demo on a fresh clone (web, worker and scheduler); `make test`
# runs the suite.
PY := .venv/bin/python
UV := .venv/tools/bin/uv
UV_VERSION := 0.13.9
PORT ?= 8000
export PORT
# Settings default to production: DEBUG off, and then every secret, the database and the broker
# must be given. What this file runs is a developer's (a local demo, the tests, benchmarks), so
# it turns DEBUG on, unless the caller set DEBUG.
DEBUG ?= 1
export DEBUG

.PHONY: install run test test-langgraph lint lint-openapi clients check-clients bench bench-quick bench-search clean

# The virtualenv is rebuilt when the dependencies or the lock file change. uv (pinned) goes into
# .venv/tools with the interpreter's own pip: a venv without pip is created in a blink, where
# ensurepip alone takes seconds. Without a usable pip outside, the venv's own is bootstrapped.
.venv/.synced: pyproject.toml uv.lock
	test -x $(PY) || python3 -m venv --without-pip .venv
	test -x $(UV) || python3 -m pip install --quiet --disable-pip-version-check --target .venv/tools "uv==$(UV_VERSION)" 2>/dev/null \
		|| { $(PY) -m ensurepip --default-pip >/dev/null && $(PY) -m pip install --quiet --disable-pip-version-check --target .venv/tools "uv==$(UV_VERSION)"; }
	$(UV) sync --frozen --inexact --quiet
	@# The repeat check's ONNX graphs, built from the shipped weights (none downloaded).
	$(PY) -m memory.core.onnx_minilm > /dev/null
	@# The urgent-moment examples' vectors (memory/data/urgent/bank.npz): rebuilt only if stale.
	$(PY) -m memory.conversations.urgency > /dev/null
	touch $@

install: .venv/.synced

# Collected again only when a static file or the installed packages change (a second `make run`
# starts without it). gzip only under DEBUG: clara/storage.py.
staticfiles/.collected: .venv/.synced $(shell find static -type f)
	STATIC_COLLECTED=1 $(PY) manage.py collectstatic --noinput --verbosity 0
	touch $@

# One process prepares everything (migrate, recovery log, the demo with its summaries, facts,
# trends and alerts computed, the logins and a new API key: `manage.py prepare_run`), printing the
# logins and the key last; then web, worker and scheduler start together (Procfile.dev). Ctrl-C
# stops all three, and so does one of them exiting. honcho kills what is still running after
# KILL_WAIT; the worker on the embedded broker takes up to ~7 s to stop cleanly, so it gets 20.
# collectstatic first: the web process serves its output compressed (Procfile.dev).
# --env /dev/null: settings come from the environment only, as for prepare_run. Unbuffered, so
# each line shows when it happens, even through a pipe.
# Set before the run rule names it: make expands a rule's prerequisites as it reads the rule, and
# an ENV_FILE defined further down left `run` without it (the .env was never written).
ENV_FILE ?= .env
run: export PYTHONUNBUFFERED = 1
# Links in alert e-mails point at the server this serves, on its PORT (honcho hands each process
# a PORT of its own, so the worker could not work it out itself). A CLARA_SITE_URL given wins.
run: export CLARA_SITE_URL ?= http://127.0.0.1:$(PORT)
run: install staticfiles/.collected $(ENV_FILE)
	$(PY) manage.py prepare_run
	$(PY) -c 'import sys, honcho.command, honcho.manager; honcho.manager.KILL_WAIT = 20; sys.exit(honcho.command.main())' \
		start --env /dev/null --procfile Procfile.dev --port $(PORT)

# The local demo's settings, read by clara/settings.py wherever a command starts (git-ignored):
# after `make run`, `.venv/bin/python manage.py ...` and the MCP server work in a new shell with
# no DEBUG=1 typed. Written only when missing: an existing .env is never overwritten.
$(ENV_FILE):
	@printf '%s\n' \
		"# Written by \`make run\` for the local demo; git-ignored, never overwritten (delete it to" \
		"# get it again). clara/settings.py reads it, so manage.py commands run in a new shell as" \
		"# under make run. Never use these settings in production: see .env.example." \
		"DEBUG=1" > $@
	@echo "Wrote $@ (DEBUG=1 for the local demo)."

test: install
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest --durations=25

# LangGraph's own store tests (from the sdists uv.lock pins, fetched from PyPI) against ClaraStore,
# beside InMemoryStore's results: fails if ClaraStore fails a case InMemoryStore passes, or one
# docs/langgraph.md does not explain. Set DATABASE_URL to run it on PostgreSQL.
test-langgraph: install
	$(PY) tests/langgraph_conformance/run.py

lint: install
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/lint-imports

# The published OpenAPI document (as /api/v1/openapi.json serves it) through redocly's recommended
# rules (redocly.yaml: warnings are errors) and spectral's OpenAPI rules (.spectral.yaml), from the
# npm registry at pinned versions; either linter's least warning fails.
REDOCLY_VERSION := 2.77.0
SPECTRAL_VERSION := 6.16.3
OPENAPI_DUMP := data/openapi.json
lint-openapi: install
	$(PY) manage.py export_openapi_schema --api clara.api.api --indent 2 --output $(OPENAPI_DUMP)
	npx --yes @redocly/cli@$(REDOCLY_VERSION) lint --config redocly.yaml $(OPENAPI_DUMP)
	npx --yes @stoplight/spectral-cli@$(SPECTRAL_VERSION) lint --ruleset .spectral.yaml \
		--fail-severity warn $(OPENAPI_DUMP)

# The generated clients (clients/README.md): the OpenAPI document as clients/openapi.json, the
# Python package clients/python (openapi-python-client from PyPI) and the TypeScript types
# clients/typescript/src/schema.d.ts (openapi-typescript from its package-lock.json). Run it after
# changing the API, and commit what changed.
clients: install
	clients/generate.sh

# CI: the checked-in clients are what `make clients` makes from today's API (regenerated into a
# scratch folder and compared), so an API change that forgot `make clients` fails here.
CLIENTS_CHECK := data/clients-check
check-clients: install
	rm -rf $(CLIENTS_CHECK)
	clients/generate.sh $(CLIENTS_CHECK)
	@diff -u clients/openapi.json $(CLIENTS_CHECK)/openapi.json \
		&& diff -ru -x __pycache__ -x .ruff_cache clients/python $(CLIENTS_CHECK)/python \
		&& diff -u clients/typescript/src/schema.d.ts $(CLIENTS_CHECK)/schema.d.ts \
		|| { echo "The checked-in clients do not match the API: run make clients and commit." >&2; exit 1; }
	rm -rf $(CLIENTS_CHECK)

bench: install
	$(PY) bench/memory_bench.py

bench-quick: install
	$(PY) bench/memory_bench.py --quick

# Long-term memory search against LangGraph's stores and mem0 (the `bench` dependency group, never
# imported by the product).
# The LoCoMo evaluation file (not shipped): LOCOMO=path/to/file.json make bench-search
LOCOMO ?= ../shared/data/locomo/locomo_dev.json
bench-search: install
	$(UV) sync --frozen --inexact --quiet --group bench
	$(PY) bench/search_bench.py --data $(LOCOMO)

clean:
	rm -rf .venv data staticfiles .pytest_cache clients/typescript/node_modules clients/typescript/dist
