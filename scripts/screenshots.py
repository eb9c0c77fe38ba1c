"""Screenshots of the dashboard's client pages for the README, taken with Playwright on Debian's chromium.

Against a running service (e.g. `zolve up`), with a client key (`zolve keys create`):

    .venv/bin/python scripts/screenshots.py --url http://127.0.0.1:8000 --key zk_... [--out docs]

It submits a job of each kind it shows, a batch and a note sheet through the API and the dashboard, waits
for them, and saves one PNG per page under --out (docs/ by default).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
JOBS = {
    "picture-planetx": {
        "kind": "planetx.deduce",
        "params": {
            "mode": "standard",
            "observations": [
                {"type": "survey", "object": "asteroid", "first": 1, "last": 6, "count": 2},
                {"type": "target", "sector": 4, "seen": "empty"},
            ],
        },
    },
    "picture-taiji": {"kind": "taiji.solve", "params": {"code": "4:2Sy2222X20Sk2Sk20X0222Sp2V0"}},
    "picture-mastermind": {
        "kind": "mastermind.guess",
        "params": {
            "n": 4,
            "k": 6,
            "history": [
                {"guess": [0, 0, 1, 1], "black": 1, "white": 1},
                {"guess": [2, 3, 1, 4], "black": 0, "white": 2},
                {"guess": [3, 2, 5, 1], "black": 1, "white": 2},
            ],
        },
    },
    "picture-leaving-earth": {"kind": "leaving_earth.plan", "params": {"origin": "E", "destination": "Mo"}},
    "picture-dice": {"kind": "dice", "params": {"dice": 4, "faces": 6}},
}
#: shown with its field errors on the new-job page
BAD_DEDUCE = """{
  "mode": "standard",
  "observations": [
    {"type": "survey", "object": "planet_x", "first": 1, "last": 14},
    {"type": "target", "sector": 4}
  ]
}"""
BATCH = {
    "kind": "leaving_earth.plan",
    "items": [
        {"client_id": "moon", "params": {"origin": "E", "destination": "L"}},
        {"client_id": "mars-orbit", "params": {"origin": "E", "destination": "Mo"}},
        {"client_id": "venus", "params": {"origin": "Eo", "destination": "Vo"}},
        {"client_id": "nowhere", "params": {"origin": "E", "destination": "Atlantis"}},
    ],
}


def submit_all(api: httpx.Client) -> tuple[dict[str, str], str]:
    jobs = {name: api.post("/jobs", json=body).raise_for_status().json()["id"] for name, body in JOBS.items()}
    batch = api.post("/batches", json=BATCH).raise_for_status().json()["id"]
    for job_id in jobs.values():
        while api.get(f"/jobs/{job_id}", params={"wait": 20}).json()["state"] not in ("succeeded", "failed"):
            time.sleep(0.5)
    while not api.get(f"/batches/{batch}").json()["done"]:
        time.sleep(0.5)
    return jobs, batch


def loaded(page: Page, selector: str, timeout: float = 60) -> None:
    """Wait until every image the selector finds has loaded (evaluated in Playwright's own world: the
    dashboard's CSP forbids the eval that page.wait_for_function would need)."""
    deadline = time.monotonic() + timeout
    images = page.locator(selector)
    while not (
        images.count()
        and all(
            images.nth(i).evaluate("i => i.complete && i.naturalWidth > 0") for i in range(images.count())
        )
    ):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{selector} did not load")
        time.sleep(0.2)


def shoot(page: Page, out: Path, name: str, selector: str | None = None) -> None:
    target = page.locator(selector) if selector else page
    target.screenshot(path=str(out / f"{name}.png"), **({} if selector else {"full_page": True}))
    print(out / f"{name}.png")


def note_sheet(page: Page, url: str, out: Path) -> None:
    page.goto(f"{url}/admin/planetx/notes")
    page.get_by_role("button", name="Start a sheet").click()
    expect(page.locator("#recommendation")).to_be_visible(timeout=60_000)
    survey = page.locator("#entry-survey")
    for label, value in (("from", "1"), ("to", "6"), ("count", "0")):
        survey.get_by_label(label).fill(value)
    survey.get_by_role("button", name="Add").click()
    expect(page.locator("#boards-left")).not_to_contain_text("4,446 of 4,446", timeout=60_000)
    loaded(page, "#sheet-live img")
    shoot(page, out, "dashboard-notes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", required=True, help="a client API key")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    args.out.mkdir(exist_ok=True)
    with httpx.Client(base_url=args.url, headers={"Authorization": f"Bearer {args.key}"}, timeout=60) as api:
        jobs, batch = submit_all(api)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        page.goto(f"{args.url}/admin/login")
        page.get_by_label("API key").fill(args.key)
        page.get_by_role("button", name="Log in").click()
        page.goto(f"{args.url}/admin/new/planetx.deduce")
        page.get_by_label("Params (JSON)").fill(BAD_DEDUCE)
        page.get_by_role("button", name="Submit job").click()
        expect(page.locator("#field-errors")).to_be_visible()
        shoot(page, args.out, "dashboard-new-job")
        for name, job_id in jobs.items():
            page.goto(f"{args.url}/admin/jobs/{job_id}")
            loaded(page, "#picture img")
            shoot(page, args.out, name, "#picture img")
        page.goto(f"{args.url}/admin/batches/{batch}")
        loaded(page, "img.thumb")
        shoot(page, args.out, "dashboard-batch")
        note_sheet(page, args.url, args.out)
        browser.close()


if __name__ == "__main__":
    main()
