"""A job's stored rows as its pages and exports read them: a page after a key, and every matching row in
chunks (keys alone in arrays read in one snapshot, or key and payload pairs through a server-side cursor),
streamed in constant memory. Each is the store's own read, published here as it is: they open their own
database connection and hand back plain keys and payloads, no ORM object."""

from __future__ import annotations

from store.rows import key_chunks, page, stream

__all__ = ["key_chunks", "page", "stream"]
