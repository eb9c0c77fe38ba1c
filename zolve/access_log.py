"""gunicorn's logger, whose access records hold no credential (issue 32).

gunicorn hands each access record, as its arguments, every request header, response header and WSGI
environ variable, whatever the format uses: the `Authorization: Bearer` key, the dashboard's session cookie
(sent and set). Whatever reads a record's arguments then holds them: logging's own error report prints them
to stderr when the log cannot be written (stdout a closed pipe), and so would any handler or filter. Here a
record holds only the format's fields (gunicorn's default, Apache's combined format: address, time, request
line, status, size, referrer, user agent); a Basic user's name is not one of them either.
"""

from __future__ import annotations

from typing import Any

from gunicorn.glogging import Logger

#: the WSGI environ variables the format's fields are made of (gunicorn.glogging.Logger.atoms)
_FIELDS_FROM = (
    "REMOTE_ADDR",
    "REQUEST_METHOD",
    "RAW_URI",
    "SERVER_PROTOCOL",
    "PATH_INFO",
    "QUERY_STRING",
    "HTTP_REFERER",
    "HTTP_USER_AGENT",
)


class AccessLog(Logger):
    def atoms(self, resp: Any, req: Any, environ: dict, request_time: Any) -> dict[str, Any]:
        fields = {name: environ[name] for name in _FIELDS_FROM if name in environ}
        atoms = super().atoms(resp, (), fields, request_time)
        # the `{name}i`, `{name}o` and `{name}e` atoms: headers and environ, not fields of the format
        return {name: value for name, value in atoms.items() if not name.startswith("{")}
