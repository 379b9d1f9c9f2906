#!/bin/sh
# Build a local base image for the Dockerfile where no image registry is reachable (so
# `python:3.11-slim` cannot be pulled): Debian bookworm (minbase) from a Debian mirror,
# with Debian's Python 3.11 (python3, python3-venv, python3-pip), imported as IMAGE.
#   sudo docker/debian-base.sh [IMAGE]        # default leakage-base:bookworm
#   docker build --build-arg BASE=leakage-base:bookworm ...
# Needs root, debootstrap and a running dockerd. MIRROR picks the mirror (default
# http://deb.debian.org/debian). The host's extra CA certificates
# (/usr/local/share/ca-certificates/*.crt) are added to the image's trust store, and pip is
# pointed at that store, so that builds behind a TLS-inspecting proxy reach PyPI as the host does.
set -eu
IMAGE="${1:-leakage-base:bookworm}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
ROOT="$(mktemp -d "${TMPDIR:-/tmp}/leakage-base.XXXXXX")"
trap 'rm -rf "$ROOT"' EXIT

debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR"
cat > "$ROOT/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
EOF
chroot "$ROOT" sh -eu -c '
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    python3 python3-venv python3-pip ca-certificates >/dev/null
  apt-get clean
  rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
'
for crt in /usr/local/share/ca-certificates/*.crt; do
  if [ -f "$crt" ]; then cp "$crt" "$ROOT/usr/local/share/ca-certificates/"; fi
done
chroot "$ROOT" update-ca-certificates >/dev/null
printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' > "$ROOT/etc/pip.conf"
# The image gets no build context, host mounts or processes: only the root file system.
tar -C "$ROOT" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["python3"]' \
  - "$IMAGE"
docker run --rm --network none "$IMAGE" python3 -c 'import sys, venv; print(sys.version)'
