"""Driving JupyterLab in Debian's Chromium: shared by tests/test_browser.py and tests/test_jupyterhub.py.

Nothing here keeps state: each wait takes its own bound in seconds.
"""

import os
from pathlib import Path

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1000",
)


def start_chromium(chromium, chromedriver, workdir, page_seconds, browser_log=False, extra_flags=()):
    """Headless Chromium driven by its chromedriver, offline, with a profile in `workdir`; the caller quits it.
    `extra_flags`: more command-line flags (e.g. a host mapped to a server of the test's)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, *extra_flags):
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={workdir / 'chromium-profile'}")
    if browser_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The explicit driver path skips Selenium Manager; SE_OFFLINE keeps it off the network in any case.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SE_OFFLINE", "true")
        service = Service(executable_path=chromedriver, log_output=str(workdir / "chromedriver.log"))
        browser = webdriver.Chrome(service=service, options=options)
    browser.set_page_load_timeout(page_seconds)
    # Headless Chromium gives no page the focus: JupyterLab then tracks no current notebook, and its status bar has
    # no kernel status, mode or cursor item. Emulated focus makes the page behave as a focused window.
    browser.execute_cdp_cmd("Emulation.setFocusEmulationEnabled", {"enabled": True})
    return browser


def artifacts_dir():
    path = Path(os.environ.get("ATTNKIT_ARTIFACTS") or "/tmp/attnkit-artifacts").resolve()
    repo = Path(__file__).resolve().parents[1]
    if path == repo or repo in path.parents:
        pytest.fail(f"ATTNKIT_ARTIFACTS={path} is inside the repository; point it elsewhere")
    path.mkdir(parents=True, exist_ok=True)
    return path


def wait_until(driver, condition, seconds, what):
    """condition()'s first truthy value, polled for `seconds`; an AssertionError naming `what` after that."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    # A page that re-renders while a condition reads it leaves stale elements: that poll says "not yet".
    wait = WebDriverWait(driver, seconds, poll_frequency=0.2, ignored_exceptions=(StaleElementReferenceException,))
    try:
        return wait.until(lambda _: condition())
    except TimeoutException:
        raise AssertionError(f"gave up after {seconds:.0f} s waiting for {what}") from None


def visible_panel(driver):
    """The notebook panel on screen (the tab JupyterLab opened), or None."""
    from selenium.webdriver.common.by import By

    panels = [panel for panel in driver.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel") if panel.is_displayed()]
    return panels[0] if len(panels) == 1 else None


def menu(driver, top, item):
    """Click a main-menu entry, e.g. Run > Run All Above Selected Cell."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.XPATH, f"//div[contains(@class,'lm-MenuBar-itemLabel') and text()='{top}']").click()
    entry = wait_until(driver, lambda: [e for e in driver.find_elements(By.CSS_SELECTOR, ".lm-Menu .lm-Menu-itemLabel")
                                        if e.text == item], 5, f"menu item {top} > {item}")
    entry[0].click()


def output_lines(cell):
    from selenium.webdriver.common.by import By

    text = "\n".join(o.text for o in cell.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output"))
    return [line.strip() for line in text.splitlines() if line.strip()]


def shown_images(driver, cell):
    from selenium.webdriver.common.by import By

    images = cell.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img")
    loaded = "return arguments[0].complete && arguments[0].naturalWidth > 0"
    return [img for img in images if driver.execute_script(loaded, img)]

