#!/usr/bin/env bash
# Set up a virtualenv with kb-qa and its test tools, then run the linters and the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# The browser tests drive Debian's Chromium (Playwright cannot download browsers here).
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) || echo "warning: could not install chromium; browser tests will be skipped"
fi
# The widget's build and test tools (esbuild, axe-core), exactly as package-lock.json pins them.
if command -v npm >/dev/null; then
    (cd widget && npm ci --no-audit --no-fund --loglevel=error)
else
    echo "warning: npm is missing; the widget's bundle and accessibility checks will fail"
fi
.venv/bin/ruff check kb_qa mkdocs_plugin tests bench training
.venv/bin/ruff format --check --quiet kb_qa mkdocs_plugin tests bench training
.venv/bin/mypy kb_qa mkdocs_plugin
.venv/bin/python -m pytest -q -p no:cacheprovider "$@"
