#!/usr/bin/env bash
# System tools some tests need that PyPI cannot provide (Debian packages). Installed once, when missing
# and when we may (root with apt-get) and are let (ZOLVE_TEST_NO_APT unset or empty); otherwise the tests
# that need them say what is missing.
set -u
need=()
command -v docker-compose >/dev/null 2>&1 || need+=(docker-compose)
# the multi-host tests (tests/multihost): network namespaces, and PostgreSQL and Redis servers of their own
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v setpriv >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 || need+=(util-linux)
command -v hostname >/dev/null 2>&1 || need+=(hostname)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
# the admin dashboard's browser tests (pytest-playwright drives it; Playwright's own browser download
# is never used)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ] && [ -n "${ZOLVE_TEST_NO_APT:-}" ]; then
    echo "not installing ${need[*]} (ZOLVE_TEST_NO_APT is set); the tests that need them will say so"
elif [ ${#need[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian packages for the tests: ${need[*]}"
    apt-get update -qq >/dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 \
        || echo "could not install ${need[*]}; the tests that need them will fail"
fi
exit 0
