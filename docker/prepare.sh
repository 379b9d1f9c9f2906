#!/bin/sh
# Prepare $LEAKAGE_HOME for the HTTP service: the default corpus index and the bundled
# models, so that the server starts without building or converting anything.
# The Dockerfile runs this at build time; on a host without Docker run it the same way:
#   LEAKAGE_HOME=/srv/leakage docker/prepare.sh
# LEAKAGE_PREPARE chooses the steps (default: index embedding judge); PYTHON the interpreter.
set -eu
: "${LEAKAGE_HOME:?set LEAKAGE_HOME to the folder the service will use}"
export LEAKAGE_HOME
PYTHON="${PYTHON:-python}"
mkdir -p "$LEAKAGE_HOME"
# shellcheck disable=SC2086  # word splitting of the step list is wanted
exec "$PYTHON" -m leakage_service.provision ${LEAKAGE_PREPARE:-index embedding judge}
