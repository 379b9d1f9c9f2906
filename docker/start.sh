#!/bin/sh
# Start the HTTP service (the image's command; also usable on a host without Docker).
# Settings come from LEAKAGE_* variables (docs/service.md); extra arguments go to
# `python -m leakage_service` (e.g. --port 9000).
set -eu
: "${LEAKAGE_HOME:?set LEAKAGE_HOME to a folder prepared by docker/prepare.sh}"
export LEAKAGE_HOME
exec "${PYTHON:-python}" -m leakage_service \
  --host "${LEAKAGE_HOST:-0.0.0.0}" --port "${LEAKAGE_PORT:-8000}" "$@"
