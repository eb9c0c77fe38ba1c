"""The thin web layer: Flask blueprints over the services (use cases) and store (reads). The app factory
is api.app.create_app."""
