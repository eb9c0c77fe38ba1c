"""The use cases (submit, cancel, retry, requeue, publish, keys) that the API, the dashboard, the workers
and the CLI share. They take a Context, raise errors.ServiceError subclasses that say what went wrong (the
API chooses the HTTP status: api.errors.STATUSES), and publish wake-up messages only after the
transaction that made them necessary committed."""
