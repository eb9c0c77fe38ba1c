"""schemathesis with every check against a private stack (the API and a worker, embedded PostgreSQL and
Redis), longer than the bounded run in `make test` (tests/api/test_schemathesis.py): its summary (test
cases, links covered, failures) and the exit code of the run.

    .venv/bin/python bench/contract.py [--max-examples 100] [--seed 1]      (make contract)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"


def run_schemathesis(
    url: str, key: str, max_examples: int, seed: int = 1, phases: str = ""
) -> subprocess.CompletedProcess:
    """`schemathesis run --checks all` on the service at `url`, with its config (schemathesis.toml: which
    answers count as right where the defaults would not know). The event streams are left out: they stream
    until their client leaves, and a fuzzer reads whole bodies. `phases`: schemathesis' (comma-separated;
    default all)."""
    command = [str(SCHEMATHESIS), "run", f"{url}/openapi.json", "--checks", "all"]
    command += ["-H", f"Authorization: Bearer {key}", "--max-examples", str(max_examples)]
    command += ["--exclude-path-regex", r"(^|.*/)events$", "--request-timeout", "30", "--seed", str(seed)]
    command += ["--phases", phases] if phases else []
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=3600, check=False)


def main() -> None:
    from bench.stack import Stack

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    unlimited = {"ZOLVE_RATE_LIMIT": "", "ZOLVE_SUBMIT_RATE_LIMIT": ""}
    with Stack(api_workers=1, private=True, env=unlimited) as stack:
        stack.start_worker(1)
        done = run_schemathesis(stack.url, stack.new_key(), args.max_examples, args.seed)
    report = done.stdout + done.stderr
    # the failures (each with the request that reproduces it), then the summary
    start = next((report.find(mark) for mark in ("=== FAILURES", "=== SUMMARY") if mark in report), -1)
    print(report[max(0, start - 40) :] if start >= 0 else report[-6000:])
    links = next((line.strip() for line in report.splitlines() if "API Links:" in line), "")
    print(f"max examples {args.max_examples}, seed {args.seed}; {links}; exit {done.returncode}")
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
