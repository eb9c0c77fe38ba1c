"""Finished jobs' pages as a person reads them, in a real browser (Debian's chromium via pytest-playwright,
the real server and worker): the outcome without the phase the job ran in, a Leaving Earth plan's years as
years ("1960", "1 year"), and a simulation's days histogram on an evenly spaced axis."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.api.test_admin_browser import (  # noqa: F401 - fixtures
    browser_type_launch_args,
    live_server,
    log_in,
    screenshot,
)
from tests.support import poll_job

#: a plan with maneuvers of one year each, flown from 1960
TO_VENUS = {"kind": "leaving_earth.plan", "params": {"origin": "Eo", "destination": "Vo", "year": 1960}}
#: six games whose days leave gaps (14, 17, 18, 22, 27 with seed 1)
GAMES = {"kind": "planetx.simulate", "params": {"mode": "standard", "games": 6, "seed": 1, "sample_games": 1}}


@pytest.fixture
def page(page: Page) -> Page:
    page.set_default_timeout(20_000)
    page.set_viewport_size({"width": 1360, "height": 900})
    return page


def _finished(client, headers: dict[str, str], body: dict) -> dict:
    job = poll_job(client, headers, client.post("/jobs", json=body, headers=headers).get_json()["id"])
    assert job["state"] == "succeeded", job
    return job


def test_a_finished_plan_shows_no_phase_and_its_years_as_years(
    page: Page,
    live_server: str,  # noqa: F811 - the fixture imported above
    make_key,
    client,
    worker,
) -> None:
    owner = make_key()
    job = _finished(client, owner, TO_VENUS)
    assert "phase" not in job["progress"], "the API omits a finished job's phase"
    assert [step["time"] for step in job["result"]["plan"]] == [1, 1]

    log_in(page, live_server, owner, then=f"/admin/jobs/{job['id']}")
    status = page.locator("#job-status")
    expect(status.locator(".state")).to_have_text("succeeded")
    expect(status.locator(".detail")).to_contain_text("routes")
    expect(status.locator(".detail")).not_to_contain_text("phase")
    plan = page.locator("table.data", has_text="Plan")
    expect(plan.locator("thead")).to_contain_text("year")
    expect(plan.locator("tbody tr").first).to_contain_text("1960")
    expect(page.locator("main")).not_to_contain_text("1,960")
    expect(page.locator("main")).not_to_contain_text("1,961")
    screenshot(page, "result-leaving-earth.png")

    page.goto(f"{live_server}/admin/jobs")
    row = page.locator(f'tr[data-job="{job["id"]}"]')
    expect(row.locator(".detail")).to_contain_text("routes")
    expect(row.locator(".detail")).not_to_contain_text("phase")

    page.goto(f"{live_server}/admin/jobs/{job['id']}/picture.svg")
    maneuvers = page.locator("g.maneuver")
    expect(maneuvers.first.locator("text").first).to_contain_text(", 1 year, year 1960")
    expect(maneuvers.nth(1).locator("text").first).to_contain_text(", 1 year, year 1961")
    expect(page.locator("svg")).not_to_contain_text("1 years")


def test_a_simulations_histogram_has_a_bar_for_every_day_between_its_first_and_last(
    page: Page,
    live_server: str,  # noqa: F811 - the fixture imported above
    make_key,
    client,
    worker,
) -> None:
    owner = make_key()
    job = _finished(client, owner, GAMES)
    days = sorted(int(day) for day in job["result"]["days_histogram"])
    assert len(days) < days[-1] - days[0] + 1, f"no gap to show: {days}"

    log_in(page, live_server, owner, then=f"/admin/jobs/{job['id']}")
    expect(page.locator("#picture img")).to_be_visible()
    screenshot(page, "result-simulate.png")
    page.goto(f"{live_server}/admin/jobs/{job['id']}/picture.svg")
    bars = page.locator("g.bar")
    expect(bars).to_have_count(days[-1] - days[0] + 1)
    gap = next(day for day in range(days[0], days[-1]) if day not in days)
    expect(page.locator("g.bar > title", has_text=f"days to locate Planet X {gap}: 0")).to_have_count(1)
    xs = [float(rect.get_attribute("x") or "nan") for rect in page.locator("g.bar > rect").all()]
    steps = [b - a for a, b in zip(xs, xs[1:], strict=False)]
    assert max(steps) - min(steps) < 0.05, xs
