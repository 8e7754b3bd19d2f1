"""The HTML a person looks at, in a real browser: the `flairsuite serve` page and `predict --format html`, in headless Chromium.

Selenium drives Debian's `chromium` with `chromium-driver` (.ci/run installs both); the tests check
the rendered DOM (highlighted `mark` elements, their types, the legend, confidences in the hover
title) and save a screenshot in the test's tmp folder and under results/screenshots/. They skip,
with the reason, where Chromium, its driver or selenium is missing.
"""

import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import write_file

from flairsuite.cli import cli

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ROOT = Path(__file__).resolve().parents[1]
SCREENSHOTS = ROOT / "results" / "screenshots"
MODEL = Path(__file__).resolve().parent / "fixtures" / "saved-models" / "lcrf-ner.pt"
LETTER = "Am Montag besuchte Anna die Stadt Berlin.\nOtto verließ Wien, sagte der König."
STARTUP_SECONDS = 600  # loading torch and the model on a busy machine
WAIT_SECONDS = 120

if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
    pytest.skip(f"headless Chromium is not installed ({CHROMIUM}, {CHROMEDRIVER}): apt-get install chromium chromium-driver", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed: pip install -e '.[test]'")
pytest.importorskip("fastapi", reason="the serve extra (fastapi, uvicorn) is not installed: pip install -e '.[test]'")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

HEADLESS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--window-size=1000,720",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator["webdriver.Chrome"]:
    """Headless Chromium with a fresh profile (the closed network makes the defaults fail: QUIC, sync, updates)."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in HEADLESS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)), options=options)
    except Exception as err:  # noqa: BLE001 (a broken browser installation is a reason to skip, not a test failure)
        pytest.skip(f"headless Chromium does not start: {type(err).__name__}: {str(err).strip().splitlines()[0]}")
    driver.set_page_load_timeout(WAIT_SECONDS)
    yield driver
    driver.quit()


def read_url(process: subprocess.Popen, lines: list[str]) -> str:
    """The URL the server announces on stdout (`serving MODEL on http://...`), its output collected in `lines`."""
    found = threading.Event()
    url: list[str] = []

    def pump() -> None:
        for line in process.stdout:
            lines.append(line)
            match = re.search(r"serving \S+ on (http://\S+)", line)
            if match and not url:
                url.append(match.group(1))
                found.set()

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not found.wait(1):
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"flairsuite serve did not start (exit {process.poll()}):\n{''.join(lines)[-2000:]}")
    return url[0]


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`flairsuite serve` on the fixture tagger, on a free loopback port, in its own process; its base URL."""
    command = [sys.executable, "-c", "from flairsuite.cli import main; main()", "serve", str(MODEL), "--port", "0", "--threads", "1", "--no-access-log"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8")
    lines: list[str] = []
    try:
        url = read_url(process, lines)
        for _ in range(WAIT_SECONDS * 10):
            try:
                with urllib.request.urlopen(url + "health", timeout=5) as response:
                    if json.load(response)["status"] == "ok":
                        break
            except OSError:
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tag_by_api(url: str, text: str) -> dict:
    """The server's answer to POST /tag for `text`."""
    request = urllib.request.Request(url + "tag", data=json.dumps({"text": text}).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as response:
        return json.load(response)


def save_screenshot(driver: "webdriver.Chrome", folder: Path, name: str) -> Path:
    """A PNG of the window in `folder` and a copy in results/screenshots/; both paths exist afterwards."""
    path = folder / name
    assert driver.save_screenshot(str(path))
    assert path.read_bytes().startswith(b"\x89PNG") and path.stat().st_size < 300_000
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, SCREENSHOTS / name)
    return path


def marks(driver: "webdriver.Chrome", scope: str) -> list[tuple[str, str, str]]:
    """(text, data-type, title) of every highlighted entity under the CSS selector `scope`."""
    return [(m.text, m.get_attribute("data-type"), m.get_attribute("title")) for m in driver.find_elements(By.CSS_SELECTOR, f"{scope} mark.ent")]


def legend(driver: "webdriver.Chrome") -> dict[str, int]:
    """The legend's types and counts as rendered."""
    items = driver.find_elements(By.CSS_SELECTOR, ".legend li")
    return {item.find_element(By.CSS_SELECTOR, ".swatch").text: int(item.find_element(By.CSS_SELECTOR, ".count").text) for item in items}


def counts(types: list[str]) -> dict[str, int]:
    return {kind: types.count(kind) for kind in sorted(set(types))}


def test_serve_page_highlights_the_entities(browser, server, tmp_path):
    expected = tag_by_api(server, LETTER)["spans"]
    assert expected, "the fixture tagger should find entities"
    browser.get(server)
    assert "lcrf-ner.pt" in browser.title
    browser.find_element(By.ID, "text").send_keys(LETTER)
    browser.find_element(By.ID, "tag").click()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda driver: driver.find_elements(By.CSS_SELECTOR, "#result mark.ent"))
    shown = marks(browser, "#result")
    assert [(text, kind) for text, kind, _ in shown] == [(span["text"], span["type"]) for span in expected]
    for (_, kind, title), span in zip(shown, expected):
        assert title == f"{kind} {span['confidence']:.2f}"
    assert browser.find_element(By.ID, "result").text == LETTER  # the whole text, entities in place
    assert legend(browser) == counts([span["type"] for span in expected])
    colours = {m.value_of_css_property("background-color") for m in browser.find_elements(By.CSS_SELECTOR, "#result mark.ent")}
    assert len(colours) == len(legend(browser))  # one colour per type
    status = browser.find_element(By.ID, "status").text
    assert status == f"{len(expected)} entities in 2 sentences"
    save_screenshot(browser, tmp_path, "serve.png")


def test_serve_page_shows_an_error_in_one_line(browser, server):
    browser.get(server)
    browser.find_element(By.ID, "text").send_keys("   ")
    browser.find_element(By.ID, "tag").click()
    WebDriverWait(browser, WAIT_SECONDS).until(lambda driver: driver.find_element(By.ID, "status").text.startswith("Error"))
    status = browser.find_element(By.ID, "status")
    assert status.text == "Error: no text to tag: the text is empty or blank" and status.get_attribute("class") == "error"
    assert not browser.find_elements(By.CSS_SELECTOR, "#result mark")


def test_predict_html_page_in_the_browser(browser, tmp_path):
    from flairsuite.predict.formats import FORMATS

    if "html" not in FORMATS:
        pytest.skip("flairsuite predict has no --format html yet")
    text = write_file(tmp_path / "brief.txt", LETTER + "\n")
    page = tmp_path / "brief.html"
    result = CliRunner().invoke(cli, ["predict", str(MODEL), str(text), "--format", "html", "--out", str(page)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = CliRunner().invoke(cli, ["predict", str(MODEL), str(text), "--format", "json"], catch_exceptions=False).stdout.splitlines()
    spans = [span for line in lines for span in json.loads(line)["spans"]]
    browser.get(page.as_uri())
    assert browser.title == "brief.txt"
    shown = marks(browser, ".doc")
    assert [(t, kind) for t, kind, _ in shown] == [(LETTER[s["start_char"] : s["end_char"]], s["type"]) for s in spans]
    assert all(re.fullmatch(rf"{kind} [01]\.\d\d", title) for _, kind, title in shown)
    assert legend(browser) == counts([s["type"] for s in spans])
    assert browser.find_element(By.CSS_SELECTOR, ".doc").text == LETTER
    save_screenshot(browser, tmp_path, "predict-html.png")
