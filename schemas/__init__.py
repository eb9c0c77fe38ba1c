"""marshmallow schemas: each kind's params and result, the job resources and the error body."""
