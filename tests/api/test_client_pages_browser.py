"""The dashboard's pages for clients in a real browser (Debian's chromium via pytest-playwright, the real
server and worker): a client submits a job from the new-job form, sees its picture, cannot open another
client's job, and the Planet X note sheet recommends anew after an observation. Every page runs under
the dashboard's Content-Security-Policy with no violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.api.test_admin_browser import (  # noqa: F401 - fixtures
    browser_type_launch_args,
    live_server,
    log_in,
    screenshot,
)
from tests.support import wait_until

SOLV0 = "3:Kw202200Fw62Dw4"


@pytest.fixture
def watched(page: Page) -> list[str]:
    """The page, with every Content-Security-Policy violation it meets collected."""
    violations: list[str] = []
    page.set_default_timeout(20_000)
    page.set_viewport_size({"width": 1360, "height": 900})
    page.on("console", lambda m: violations.append(m.text) if "Content Security" in m.text else None)
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error("
        "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
    )
    return violations


def loaded(image: Locator) -> None:
    """The image has loaded (checked in Playwright's world: the page's CSP forbids the eval of
    wait_for_function)."""
    wait_until(lambda: image.evaluate("i => i.complete && i.naturalWidth > 0"), 20, what="the picture")


def test_a_client_submits_from_the_form_sees_the_picture_and_not_another_clients_job(
    page: Page,
    watched: list[str],
    live_server: str,  # noqa: F811 - the fixture imported above
    make_key,
    client,
    worker,
) -> None:
    others = client.post(
        "/jobs", json={"kind": "dice", "params": {"dice": 3, "faces": 4}}, headers=make_key()
    )
    other_job = others.get_json()["id"]
    log_in(page, live_server, make_key(), then="/admin/new/taiji.solve")
    editor = page.get_by_label("Params (JSON)")
    expect(editor).to_have_value(f'{{\n  "code": "{SOLV0}",\n  "unique": true\n}}')  # the kind's example
    editor.fill('{"code": "3:Q"}')
    page.get_by_role("button", name="Submit job").click()
    expect(page.locator("#field-errors")).to_contain_text("params.code")
    expect(editor).to_have_value('{"code": "3:Q"}')

    editor.fill(f'{{"code": "{SOLV0}"}}')
    page.get_by_role("button", name="Submit job").click()
    expect(page).to_have_url(re.compile(rf"{live_server}/admin/jobs/[0-9a-f-]{{36}}$"))
    picture = page.locator("#picture img")
    expect(picture).to_be_visible(timeout=30_000)  # the page reloads itself once the job is final
    loaded(picture)
    expect(page.locator("#job-status .state")).to_have_text("succeeded")
    screenshot(page, "client-job-taiji.png")

    page.goto(f"{live_server}/admin/jobs")
    expect(page.locator(f'tr[data-job="{other_job}"]')).to_have_count(0)
    page.goto(f"{live_server}/admin/jobs/{other_job}")
    expect(page.get_by_role("heading", name="404 Not Found")).to_be_visible()
    response = page.goto(f"{live_server}/admin/jobs/{other_job}/picture.svg")
    assert response is not None and response.status == 404
    assert watched == []


def test_the_note_sheet_recommends_anew_after_an_observation(
    page: Page,
    watched: list[str],
    live_server: str,  # noqa: F811 - the fixture imported above
    make_key,
    worker,
) -> None:
    log_in(page, live_server, make_key(), then="/admin/planetx/notes")
    page.get_by_role("button", name="Start a sheet").click()
    recommendation = page.locator("#recommendation")
    expect(recommendation).to_contain_text("survey asteroid 1-6", timeout=30_000)
    expect(page.locator("#boards-left")).to_contain_text("4,446 of 4,446 boards fit")

    survey = page.locator("#entry-survey")
    survey.get_by_label("object").select_option("asteroid")
    survey.get_by_label("from").fill("1")
    survey.get_by_label("to").fill("6")
    survey.get_by_label("count").fill("0")
    survey.get_by_role("button", name="Add").click()
    expect(page.locator("#boards-left")).to_contain_text("548 of 4,446 boards fit", timeout=30_000)
    expect(recommendation).not_to_contain_text("survey asteroid 1-6")
    expect(recommendation).to_contain_text("Next:")
    observation = page.locator("#observations .observation")
    expect(observation).to_have_text("survey asteroid 1–6: none")  # in words, not as JSON
    expect(observation).to_have_attribute("title", re.compile(r'"count": 0'))
    expect(page.locator("#actions tbody tr").first).to_be_visible()
    loaded(page.locator("#sheet-live img"))
    screenshot(page, "client-notes.png")
    assert watched == []
