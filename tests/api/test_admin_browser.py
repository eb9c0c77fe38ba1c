"""The admin dashboard in a real browser: Debian's chromium, headless, driven by pytest-playwright,
against the app served by a real HTTP server, with the real worker running the jobs. Screenshots go to
test-artifacts/ (the README's docs/dashboard-overview.png is a copy of one)."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from werkzeug.serving import make_server

from store import keys
from tests.support import ROOT

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
ENUMERATE = {"kind": "planetx.enumerate", "params": {"mode": "standard"}, "fresh": True}
SLOW = {"kind": "dice", "params": {"dice": 3, "faces": 20}, "time_limit": 120}


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    """Debian's chromium (installed by scripts/test-tools.sh); Playwright never downloads a browser."""
    if not Path(CHROMIUM).exists() or shutil.which("chromium") is None:
        pytest.fail("chromium is not installed: `make test` installs Debian's chromium package")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "headless": True,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ],
    }


@pytest.fixture(scope="module")
def live_server(app) -> Iterator[str]:
    """The app behind a real threaded HTTP server, as a browser needs."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(10)


@pytest.fixture
def page(page: Page) -> Page:
    page.set_default_timeout(20_000)
    page.set_viewport_size({"width": 1360, "height": 900})
    return page


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def log_in(page: Page, base: str, headers: dict[str, str], then: str = "/admin/") -> None:
    page.goto(f"{base}{then}")
    expect(page).to_have_url(f"{base}/admin/login?next={then}")
    page.get_by_label("API key").fill(headers["Authorization"].removeprefix("Bearer "))
    page.get_by_role("button", name="Log in").click()


def test_a_client_key_opens_its_jobs_but_not_the_overview(page: Page, live_server: str, make_key) -> None:
    log_in(page, live_server, make_key())
    expect(page).to_have_url(f"{live_server}/admin/jobs")
    expect(page.get_by_role("link", name="Overview")).to_have_count(0)
    expect(page.get_by_text("· admin")).to_have_count(0)


def test_a_job_appears_runs_to_100_percent_and_has_a_page(
    page: Page,
    live_server: str,
    db,
    make_key,
    client,
    worker,
) -> None:
    owner = make_key()
    with db.session() as session:
        owner_id = keys.authenticate(session, owner["Authorization"].removeprefix("Bearer ")).id
    log_in(page, live_server, make_key(admin=True), then="/admin/jobs")
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    # its owner's jobs only: in the list of every job, other tests' jobs could push it off the first page
    page.goto(f"{live_server}/admin/jobs?owner={owner_id}")
    expect(page.locator("#job-rows")).to_contain_text("no jobs")

    job_id = client.post("/jobs", json=ENUMERATE, headers=owner).get_json()["id"]
    row = page.locator(f'tr[data-job="{job_id}"]')
    expect(row).to_be_visible(timeout=15_000)  # the first page re-reads its rows every 3 s
    expect(row.locator("progress")).to_have_attribute("value", "100", timeout=120_000)
    expect(row.locator(".state")).to_have_text("succeeded")

    row.get_by_role("link", name=job_id).click()
    expect(page).to_have_url(f"{live_server}/admin/jobs/{job_id}")
    expect(page.locator("#history")).to_contain_text("planned")
    expect(page.get_by_text("Sectors (counts)")).to_be_visible()
    expect(page.locator("#shards .cell.state-succeeded").first).to_be_visible()
    expect(page.get_by_role("link", name="boards.csv")).to_be_visible()
    screenshot(page, "dashboard-job.png")


def test_cancel_a_running_job_and_watch_it_stop(
    page: Page,
    live_server: str,
    make_key,
    client,
    worker,
) -> None:
    owner = make_key()
    job_id = client.post("/jobs", json=SLOW, headers=owner).get_json()["id"]
    log_in(page, live_server, make_key(admin=True))
    workers = page.locator("#workers")
    expect(workers).to_contain_text(job_id[:8], timeout=20_000)  # the overview re-reads itself every 5 s
    screenshot(page, "dashboard-overview.png")

    workers.get_by_role("link", name=job_id[:8]).click()
    status = page.locator("#job-status .state")
    expect(status).to_have_text("running")
    page.get_by_role("link", name="Cancel…").click()
    expect(page.get_by_role("heading", name="Cancel job")).to_be_visible()
    page.get_by_role("button", name="Yes, cancel job").click()
    expect(page).to_have_url(f"{live_server}/admin/jobs/{job_id}")
    expect(status).to_have_text("cancelled", timeout=15_000)  # the status fragment polls every second
    expect(page.locator("#history")).to_contain_text("cancel_requested")  # the page reloads when final
    expect(page.get_by_role("link", name="Cancel…")).to_have_count(0)
    # the confirmation page of a job already cancelled (an old link, a second tab) offers no cancel
    page.goto(f"{live_server}/admin/jobs/{job_id}/cancel")
    expect(page.locator("#confirm-message")).to_contain_text("already finished (cancelled)")
    expect(page.get_by_role("button", name="Yes, cancel job")).to_have_count(0)
    page.get_by_role("link", name="Back to the job").click()
    expect(page).to_have_url(f"{live_server}/admin/jobs/{job_id}")
