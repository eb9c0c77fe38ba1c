"""What a page's cursor looks like, for the store that makes and reads it and the API that documents it."""

#: a job list's cursor: the last job's creation time (microseconds since 1970, UTC) and its id. Any text of
#: this form is a place in the list (the page after it), so the API documents exactly the cursors it takes
JOB_CURSOR = r"^[0-9]{1,17}_[0-9a-f]{32}$"
