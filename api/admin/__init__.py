"""The admin dashboard at /admin: server-rendered pages (Jinja, htmx vendored in static/) for operators.
A plain Flask blueprint (views.bp, installed by setup.init_admin), outside the OpenAPI spec."""
