#!/usr/bin/env bash
# The generated clients from the API as the code describes it now (`make clients`):
#   clients/generate.sh          writes clients/openapi.json, clients/python, clients/typescript/src/schema.d.ts
#   clients/generate.sh DIR      writes the same into DIR (openapi.json, python/, schema.d.ts)
# Tools at pinned versions: openapi-python-client from PyPI (uv tool run), openapi-typescript from
# clients/typescript's package-lock.json (npm ci), the project's own ruff for formatting.
set -euo pipefail
cd "$(dirname "$0")/.."
OPENAPI_PYTHON_CLIENT_VERSION=0.29.0
OUT="${1:-}"
if [ -n "$OUT" ]; then
  mkdir -p "$OUT"
  DOC="$OUT/openapi.json"; PY_OUT="$OUT/python"; TS_OUT="$OUT/schema.d.ts"
else
  DOC=clients/openapi.json; PY_OUT=clients/python; TS_OUT=clients/typescript/src/schema.d.ts
fi

DEBUG=1 .venv/bin/python manage.py export_openapi_schema --api clara.api.api --indent 2 \
  --output "$DOC"

PATH="$PWD/.venv/bin:$PATH" .venv/tools/bin/uv tool run --quiet \
  "openapi-python-client==$OPENAPI_PYTHON_CLIENT_VERSION" generate --path "$DOC" \
  --config clients/python-client.yaml --custom-template-path clients/templates/python \
  --meta poetry --output-path "$PY_OUT" --overwrite >/dev/null

if [ ! -x clients/typescript/node_modules/.bin/openapi-typescript ]; then
  (cd clients/typescript && npm ci --no-audit --no-fund --loglevel=error)
fi
# --default-non-nullable=false: a field with a default stays optional in what the bot sends.
clients/typescript/node_modules/.bin/openapi-typescript "$DOC" -o "$TS_OUT" \
  --default-non-nullable=false >/dev/null
