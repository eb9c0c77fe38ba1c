#!/usr/bin/env bash
# Installs what building and testing the image needs, from Debian's packages, when it is missing:
# podman and runc (the runtime that works here), mmdebstrap (the base image), iproute2 (the test's network
# namespace), catatonit (the pause process of `podman kube play`'s pods), PostgreSQL and Redis (the test's
# servers). Runs `apt-get update` once, only when something
# is missing. Needs root (apt-get).
set -euo pipefail

need=()
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v ip >/dev/null || need+=(iproute2)
if [[ "${1:-}" == "--test" ]]; then
  command -v catatonit >/dev/null || need+=(catatonit)
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
  command -v redis-server >/dev/null || need+=(redis-server)
fi
if ((${#need[@]})); then
  echo "installing ${need[*]} (Debian packages)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" uidmap >/dev/null
fi
