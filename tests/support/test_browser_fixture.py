"""The headless-Chromium fixture itself: a file:// page runs its script and a console error is caught."""

from __future__ import annotations


def test_file_page_runs_script_and_errors_are_collected(browser_page, tmp_path):
    page_file = tmp_path / "p.html"
    page_file.write_text(
        "<html><body><p id='out'></p><script>document.getElementById('out').textContent = String(6 * 7);"
        "console.error('deliberate');</script></body></html>"
    )
    browser_page.goto(page_file.as_uri())
    assert browser_page.inner_text("#out") == "42"
    assert browser_page.viewcert_errors == ["console.error: deliberate"]
