#!/usr/bin/env bash
# podman with this machine type's settings (containers.conf beside this file: runc, cgroupfs, no default
# ulimits). Use it as podman: `scripts/image/podman.sh run --rm --network host localhost/zolve:latest ...`.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
exec podman "$@"
