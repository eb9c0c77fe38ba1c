"""The web layer's published surface for a kind's own dashboard pages (`Kind.pages`, e.g. Planet X's note
sheet): the one module of api/ they may import (tests/test_architecture.py holds them to it), so that
the dashboard's internals can change without breaking a kind. Besides it, a kind's pages use the use
cases (services/) and schemas/ like any front end.

- `signed_in_caller()`: who the dashboard's signed-in key is, as the use cases take it;
- `service_context()`: the request's context for the use cases (database, broker, settings);
- `counts_as_submit(free_when)`: marks a view whose POST makes a job, so it draws on the submit budget;
- `field_errors(errors)`: marshmallow's nested messages as (field path, message) pairs for a form;
- `LAYOUT`: the template a page extends (`{% extends "admin/base.html" %}`), with the dashboard's menu.
"""

from __future__ import annotations

from api.admin.present import field_errors
from api.admin.views import caller_of_session as signed_in_caller
from api.deps import context as service_context
from api.limits import counts_as_submit

#: the dashboard's page layout, which a kind's templates extend
LAYOUT = "admin/base.html"

__all__ = ["LAYOUT", "counts_as_submit", "field_errors", "service_context", "signed_in_caller"]
