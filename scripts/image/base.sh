#!/usr/bin/env bash
# Makes the base image from Debian bookworm's packages, once: no container registry can be reached on this
# machine type, so `FROM python:3.11-slim` cannot be pulled. bookworm's python3 is 3.11.
#   scripts/image/base.sh [IMAGE]        (default localhost/zolve-base:bookworm; kept while it exists)
#   ZOLVE_BASE_REBUILD=1 scripts/image/base.sh   makes it again
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
image="${1:-localhost/zolve-base:bookworm}"
podman=("$here/podman.sh")

if [[ -z "${ZOLVE_BASE_REBUILD:-}" ]] && "${podman[@]}" image exists "$image"; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "making the base image $image from Debian bookworm (mmdebstrap)" >&2
start=$SECONDS
# minbase: Priority required packages only (passwd's useradd among them), plus Python and its venv module;
# ca-certificates for the TLS of whatever the image talks to. No apt lists or caches are kept.
mmdebstrap --quiet --variant=minbase --include=python3,python3-venv,ca-certificates \
  --aptopt='Acquire::Retries "3"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
  bookworm "$work/base.tar"
"${podman[@]}" import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'CMD ["/bin/bash"]' \
  "$work/base.tar" "$image" >/dev/null
echo "base image $image made in $((SECONDS - start)) s" >&2
