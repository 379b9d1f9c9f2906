#!/usr/bin/env bash
# Build the image and use it as an operator would (`make docker-test`; not in CI: slow).
# Needs a running Docker engine (docs/service.md, "Docker"), curl and python3 on the host.
#   1. docker build --network host (arguments from DOCKER_BUILD_ARGS)
#   2. inside the image: the service user, the installed (not editable) packages, their data
#   3. docker run --network host with API keys and a named volume on $LEAKAGE_HOME/service:
#      ready, healthy, /docs offline, a score, a job
#   4. the container removed, a new one on the same volume: the job and its results are there
# Then the containers and the volume are removed; the image is kept (tag IMAGE).
# Settings (environment): IMAGE (default leakage:test), PORT (default a free port),
# DOCKER_BUILD_ARGS (e.g. "--build-arg BASE=leakage-base:bookworm --build-arg EXTRAS="),
# SKIP_BUILD=1 to test IMAGE as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE="${IMAGE:-leakage:test}"
PORT="${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
URL="http://127.0.0.1:$PORT"
KEY="test-$(python3 -c 'import secrets; print(secrets.token_hex(12))')"
NAME="leakage-test-$$"
VOLUME="leakage-test-$$"
EXAMPLES=corpora/examples

step() { printf '\n== %s\n' "$*"; }
fail() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }
now() { python3 -c 'import time; print(time.monotonic())'; }
since() { python3 -c "import sys, time; print(f'{time.monotonic() - float(sys.argv[1]):.1f}')" "$1"; }
# json FIELD...: the field of the JSON object on standard input (nested: a.b)
json() { python3 -c '
import json, sys
doc = json.load(sys.stdin)
for path in sys.argv[1:]:
    value = doc
    for part in path.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    print(value)' "$@"; }
api() { curl -sS --max-time 60 -H "Authorization: Bearer $KEY" "$@"; }

cleanup() {
  docker rm -f "$NAME" >/dev/null 2>&1 || true
  docker volume rm "$VOLUME" >/dev/null 2>&1 || true
}
trap cleanup EXIT

docker info >/dev/null 2>&1 || fail "no Docker engine answers: start dockerd (docs/service.md, Docker)"

if [ "${SKIP_BUILD:-}" != 1 ]; then
  step "build $IMAGE ${DOCKER_BUILD_ARGS:-}"
  start=$(now)
  # shellcheck disable=SC2086  # DOCKER_BUILD_ARGS is a list of arguments
  docker build --network host -t "$IMAGE" ${DOCKER_BUILD_ARGS:-} .
  echo "built in $(since "$start") s"
fi
docker image inspect -f 'image size: {{.Size}} bytes' "$IMAGE"

step "the image: service user, installed packages and their data, no source tree"
docker run --rm --network none "$IMAGE" python -c '
import os, sys
from importlib import metadata
from pathlib import Path
import leakage, leakage_service
from leakage.games import load_cards
from leakage.backends.ensemble import default_weights_path, read_weights
from swagger_ui_bundle import swagger_ui_path

assert os.getuid() == 10001, f"runs as uid {os.getuid()}"
for module in (leakage, leakage_service):
    where = Path(module.__file__)
    assert where.is_relative_to(sys.prefix), f"{module.__name__} is imported from {where}"
for dist in ("leakage", "leakage-service"):
    direct = metadata.distribution(dist).read_text("direct_url.json") or ""
    assert "editable" not in direct, f"{dist} is an editable install: {direct}"
app = sorted(str(p.relative_to("/app")) for p in Path("/app").rglob("*"))
assert app == ["docker", "docker/prepare.sh", "docker/start.sh"], f"/app holds {app}"
cards = load_cards()
weights = read_weights(default_weights_path())
assert (Path(str(swagger_ui_path)) / "swagger-ui-bundle.js").is_file()
service = Path(os.environ["LEAKAGE_HOME"], "service")
assert os.access(service, os.W_OK), f"{service} is not writable"
print(f"uid 10001; packages in {sys.prefix}; {len(cards)} cards; ensemble weights "
      f"{weights.members}; /app holds only docker/")
'

# start: a container on the same volume; prints the seconds until /readyz answers 200
start_container() {
  docker run -d --name "$NAME" --network host \
    -e LEAKAGE_API_KEYS="$KEY" -e LEAKAGE_PORT="$PORT" \
    -v "$VOLUME":/var/lib/leakage/service "$IMAGE" >/dev/null
  local start deadline
  start=$(now)
  deadline=$((SECONDS + 300))
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 200 ]; do
    if [ "$(docker inspect -f '{{.State.Running}}' "$NAME")" != true ]; then
      docker logs "$NAME" >&2
      fail "the container stopped before it was ready"
    fi
    [ "$SECONDS" -lt "$deadline" ] || { docker logs "$NAME" >&2; fail "not ready in 300 s"; }
    sleep 0.2
  done
  echo "ready in $(since "$start") s after docker run"
}

step "run with API keys and the volume $VOLUME (port $PORT)"
docker volume create "$VOLUME" >/dev/null
start_container
code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/backends")
[ "$code" = 401 ] || fail "/v1/backends without the key: $code, expected 401"
echo "without the key: $code; loaded backends: $(curl -sS "$URL/readyz" | json loaded)"

step "/docs offline: the page's script, style sheet and icon come from the service"
page=$(curl -sS "$URL/docs")
if grep -Eq '(https?:)?//[A-Za-z0-9]' <<<"$page"; then fail "/docs refers to another host"; fi
for asset in $(grep -Eo '(src|href)="[^"]+"' <<<"$page" | sed -E 's/^(src|href)="(.*)"$/\2/'); do
  type=$(curl -sS -o /dev/null -w '%{http_code} %{content_type}' "$URL$asset")
  case "$type" in 200\ *) echo "$asset: $type" ;; *) fail "$asset: $type" ;; esac
done

step "score a transcript"
rank=$(api "$URL/v1/score" -H 'Content-Type: application/json' --data-binary @"$EXAMPLES/chameleon_sports.json" \
  | json summary.final_secret_rank)
[ "$rank" = 1 ] || fail "final secret rank $rank, expected 1"
echo "chameleon_sports.json: the secret ranks $rank"

step "a job"
games=$(grep -c . "$EXAMPLES/chameleon_batch.jsonl")
job=$(api "$URL/v1/jobs" -H 'Content-Type: application/x-ndjson' \
  --data-binary @"$EXAMPLES/chameleon_batch.jsonl" | json id)
deadline=$((SECONDS + 120))
while :; do
  state=$(api "$URL/v1/jobs/$job" | json state)
  case "$state" in done) break ;; failed | cancelled) fail "job $job $state" ;; esac
  [ "$SECONDS" -lt "$deadline" ] || fail "job $job still $state after 120 s"
  sleep 0.5
done
results=$(api "$URL/v1/jobs/$job/results" | grep -c .)
[ "$results" = "$games" ] || fail "job $job: $results results, expected $games"
echo "job $job: $state, $results results"

step "health check (HEALTHCHECK on /readyz; the first probe runs 30 s after the start)"
deadline=$((SECONDS + 120))
until [ "$(docker inspect -f '{{.State.Health.Status}}' "$NAME")" = healthy ]; do
  [ "$SECONDS" -lt "$deadline" ] || fail "not healthy after 120 s"
  sleep 2
done
echo healthy

step "a new container on the same volume finds the job"
docker stop -t 30 "$NAME" >/dev/null
docker rm "$NAME" >/dev/null
start_container
again=$(api "$URL/v1/jobs/$job" | json state done)
[ "$again" = "$(printf 'done\n%s' "$games")" ] || fail "after the restart job $job is: $again"
results=$(api "$URL/v1/jobs/$job/results" | grep -c .)
[ "$results" = "$games" ] || fail "after the restart job $job has $results results"
echo "job $job: done, $results results after the restart"

step "passed: $IMAGE"
