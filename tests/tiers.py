"""The two test tiers, marked at collection so that no test has to remember its own tier.

`integration`: a test that needs servers. It is marked here when it uses (directly or through another
fixture) one of SERVER_FIXTURES, the fixtures that start or connect to PostgreSQL, Redis, the Celery
worker or a browser, or when its module imports one of SERVER_STARTERS, the helpers that start a whole
stack of their own. A module that starts servers some other way (a `zolve up` subprocess, say) says
so itself with `pytestmark = pytest.mark.integration` or a mark on the test.

`slow`: a test that needs no server but takes seconds (a heavy Z3 case, a subprocess importing z3);
those are marked by hand where they are defined.

`make test-fast` runs `-m "not integration and not slow"`, which never starts or connects to a server;
`make test` runs both tiers and everything else.
"""

from __future__ import annotations

import pytest

#: the fixtures of tests/conftest.py (all of them rest on `settings`, which starts or reaches the servers),
#: the external servers of tests/test_external_services.py and the browser of pytest-playwright
SERVER_FIXTURES = frozenset(
    {
        "settings",
        "worker_env",
        "worker",
        "db",
        "app",
        "client",
        "make_key",
        "make_key_module",
        "auth",
        "isolated_db",
        "wait_job",
        "live_api",
        "external_database",
        "browser_type",
        "browser",
        "page",
    }
)
#: names from tests/support.py and zolve.embedded: a test module that imports one starts its own servers
SERVER_STARTERS = ("private_stack", "PrivateStack", "WorkerProcess", "EmbeddedServices")


def _starts_servers(item: pytest.Item) -> bool:
    module = getattr(item, "module", None)
    return module is not None and any(hasattr(module, name) for name in SERVER_STARTERS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("integration") is not None:
            continue
        if SERVER_FIXTURES.intersection(getattr(item, "fixturenames", ())) or _starts_servers(item):
            item.add_marker(pytest.mark.integration)
