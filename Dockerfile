# One image for every role: `zolve api` (the CMD), `zolve worker`, `zolve migrate`, `zolve healthcheck worker`.
# It installs the wheels built from this checkout, the service's and its client library's (pyproject.toml and
# client/pyproject.toml say what ships), never folders copied one by one.
#
# BASE_IMAGE: any Debian-like image with python3 (3.11+), its venv module and useradd. The registry's
# python:3.11-slim by default; where no registry can be reached, `make image` builds on a base made from
# Debian bookworm's packages (scripts/image/base.sh).
# PIP_CA_BUNDLE: the path, inside the build's RUN steps, of a CA bundle for pip and its build subprocesses
# (PIP_CERT; for a TLS-intercepting proxy); `make image` mounts the host's bundle there. Unset: pip's own.
ARG BASE_IMAGE=python:3.11-slim

FROM ${BASE_IMAGE} AS builder
ARG PIP_CA_BUNDLE
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
RUN python3 -m venv /opt/build
WORKDIR /src
COPY . .
# the build backend (setuptools, from pyproject.toml's build-system) is fetched into an isolated environment
RUN if [ -n "$PIP_CA_BUNDLE" ]; then export PIP_CERT="$PIP_CA_BUNDLE"; fi \
 && /opt/build/bin/pip wheel --no-deps --wheel-dir /wheels ./client . \
 && ls /wheels/zolve-*.whl /wheels/zolve_client-*.whl

FROM ${BASE_IMAGE}
ARG PIP_CA_BUNDLE
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 \
    VIRTUAL_ENV=/opt/zolve \
    PATH=/opt/zolve/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
RUN useradd --create-home --uid 1000 zolve && python3 -m venv /opt/zolve
# the dependencies exactly as CI installed and tested them (requirements.lock: pinned, with hashes), in a
# layer of their own that a code change does not rebuild (and what the lock lacks below Python 3.11.3)
COPY requirements.lock requirements-before-3.11.3.lock /tmp/
RUN if [ -n "$PIP_CA_BUNDLE" ]; then export PIP_CERT="$PIP_CA_BUNDLE"; fi \
 && pip install --require-hashes -r /tmp/requirements.lock -r /tmp/requirements-before-3.11.3.lock \
 && rm /tmp/*.lock
# then the product itself: its wheel and the client library's (built from client/, which it depends on),
# their dependencies already there. COPY, not a RUN --mount of the
# builder's folder: buildah's cache key for such a RUN leaves out the mounted files, so a code change
# would reuse the layer of the old wheel.
COPY --from=builder /wheels/ /tmp/wheels/
RUN pip install --no-deps /tmp/wheels/zolve-*.whl /tmp/wheels/zolve_client-*.whl && rm -rf /tmp/wheels
# numeric, so that Kubernetes' runAsNonRoot can check it
USER 1000
WORKDIR /home/zolve
EXPOSE 8000
CMD ["zolve", "api", "--host", "0.0.0.0", "--port", "8000"]
