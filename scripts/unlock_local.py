"""Remove a distribution built from this checkout from a pip-compile lock (`make lock`): its entry, hashes
and all. It is installed from the checkout; a pinned hash of a local build would match no index."""

from __future__ import annotations

import re
import sys
from pathlib import Path


def without(text: str, name: str) -> str:
    entry = rf"^{re.escape(name)}==\S+(?:[ \t]*\\\n[ \t]+--hash=\S+)*\n"
    return re.sub(entry, "", text, flags=re.M)


if __name__ == "__main__":
    lock, name = Path(sys.argv[1]), sys.argv[2]
    lock.write_text(without(lock.read_text(), name))
