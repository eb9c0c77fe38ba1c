"""The dashboard's Content-Security-Policy (api/security.py) in a real browser: Debian's chromium runs the
pages, htmx polls and injects its indicator style, and nothing is refused. A policy too strict for what the
pages load shows here as a violation; the headers themselves are tested in tests/test_https.py."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.api.test_admin_browser import browser_type_launch_args, live_server, log_in  # noqa: F401 - fixtures


def test_the_dashboard_runs_under_its_policy_with_no_violation(
    page: Page,
    live_server: str,  # noqa: F811 - the fixture imported above
    make_key,
) -> None:
    violations: list[str] = []
    page.on(
        "console",
        lambda message: violations.append(message.text) if "Content Security" in message.text else None,
    )
    page.add_init_script(
        "document.addEventListener('securitypolicyviolation', e => console.error("
        "'Content Security Policy violation: ' + e.violatedDirective + ' ' + e.blockedURI))"
    )
    response = page.goto(f"{live_server}/admin/login")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    log_in(page, live_server, make_key(admin=True))
    expect(page.get_by_role("link", name="Jobs")).to_be_visible()
    # htmx ran (it adds its indicator <style>) and polled the overview panel at least once
    with page.expect_response(lambda r: "/admin/panel" in r.url, timeout=15_000):
        pass
    injected = page.evaluate("[...document.querySelectorAll('style')].map(s => s.textContent).join('')")
    assert ".htmx-indicator{opacity:0" in injected
    page.goto(f"{live_server}/admin/jobs")
    expect(page.get_by_role("heading", name="Jobs")).to_be_visible()
    assert violations == []
