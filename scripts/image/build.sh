#!/usr/bin/env bash
# `make image`: builds localhost/zolve:latest from the Dockerfile with podman, on this machine type.
# Installs podman, runc and mmdebstrap when missing (tools.sh), makes the Debian base once (base.sh), and
# builds on it. Settings (environment):
#   ZOLVE_IMAGE       the tag to build (default localhost/zolve:latest)
#   BASE_IMAGE        the base (default localhost/zolve-base:bookworm, made here when missing); give
#                     python:3.11-slim where a registry can be reached
#   ZOLVE_BUILD_ARGS  extra `podman build` arguments (e.g. --no-cache)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
image="${ZOLVE_IMAGE:-localhost/zolve:latest}"
base="${BASE_IMAGE:-localhost/zolve-base:bookworm}"

"$here/tools.sh"
if [[ "$base" == localhost/zolve-base:* ]]; then
  "$here/base.sh" "$base"
fi

args=(--network host --build-arg "BASE_IMAGE=$base" --tag "$image" --file "$root/Dockerfile")
# pip inside the build trusts what the host trusts (on this machine type a TLS-intercepting proxy's CA is
# among them): the host's bundle is mounted for the RUN steps only, never copied into a layer
host_bundle=/etc/ssl/certs/ca-certificates.crt
if [[ -r "$host_bundle" ]]; then
  args+=(--volume "$host_bundle:/run/host-ca.crt:ro" --build-arg PIP_CA_BUNDLE=/run/host-ca.crt)
fi
start=$SECONDS
# shellcheck disable=SC2086  # ZOLVE_BUILD_ARGS is a list of words
"$here/podman.sh" build "${args[@]}" ${ZOLVE_BUILD_ARGS:-} "$root"
echo "built $image on $base in $((SECONDS - start)) s" >&2
"$here/podman.sh" image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' "$image" >&2
