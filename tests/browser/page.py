"""Verbatim's page in a real browser (Debian's chromium, headless, through Selenium and
chromedriver): sign-in by the one-time link, each view's main action, live dictation text, and
sign-out. (Pages of other origins are attack.py's.) Prints one line per step; exits non-zero on the first
failure.

    page.py SIGN_IN_URL SCREENSHOT_DIR EXPECTED_WORD

The server is in sim mode with the API token required, a backup imported (two rules, terms,
a correction, history) and a microphone that says a sentence holding EXPECTED_WORD.
"""

import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

SIGN_IN_URL, SHOTS, EXPECTED_WORD = sys.argv[1], sys.argv[2], sys.argv[3].lower()
ORIGIN = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(SIGN_IN_URL))
TOKEN = os.environ["VERBATIM_API_TOKEN"]


STARTED = time.monotonic()


def step(what):
    print(f"ok ({time.monotonic() - STARTED:.1f} s): {what}", flush=True)


def api(method, path, body=None):
    """The API called as a script would, with the token (to check what the page did)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(ORIGIN + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {TOKEN}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                "--disable-dev-shm-usage", f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


driver = browser()
wait = WebDriverWait(driver, 20)
by_id = lambda name: driver.find_element(By.ID, name)  # noqa: E731


def text_of(name):
    return by_id(name).text


def shoot(name):
    driver.save_screenshot(os.path.join(SHOTS, f"{name}.png"))


def show(view):
    driver.find_element(By.CSS_SELECTOR, f'nav a[href="#{view}"]').click()
    wait.until(lambda d: by_id(f"view-{view}").is_displayed())


try:
    # Without signing in, the page loads but the API refuses it with the Error object's message.
    driver.get(ORIGIN + "/#history")
    wait.until(lambda d: by_id("error").is_displayed())
    assert "Missing or invalid API token" in text_of("error"), text_of("error")
    step("before sign-in the page shows the API's refusal")

    driver.get(SIGN_IN_URL)
    wait.until(lambda d: d.current_url.rstrip("/#dictation") == ORIGIN)
    wait.until(lambda d: text_of("status").startswith("Ready"))
    cookie = driver.get_cookie("verbatim_session")
    assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict", cookie
    assert driver.execute_script("return document.cookie") == "", "the cookie is readable by scripts"
    # The secret half came in the fragment; the page keeps it in its origin's storage, and the
    # address bar no longer shows it.
    assert "session=" not in driver.current_url, driver.current_url
    assert len(driver.execute_script("return localStorage.getItem('verbatim.session')") or "") >= 43
    step(f"signed in: {text_of('status')}")

    # The link works once.
    driver.get(SIGN_IN_URL)
    assert "not valid any more" in driver.page_source
    driver.get(ORIGIN + "/")
    wait.until(lambda d: text_of("status").startswith("Ready"))
    step("the sign-in link works once")

    # Dictation: live text while recording, the final text at stop.
    show("dictation")
    by_id("dictation-toggle").click()
    wait.until(lambda d: text_of("dictation-state") == "Listening…")
    live = WebDriverWait(driver, 30).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#dictation-text .committed").text)
    step(f"live text while recording: {live!r}")
    by_id("dictation-toggle").click()
    wait.until(lambda d: text_of("dictation-state") == "Done.")
    final = driver.find_element(By.CSS_SELECTOR, "#dictation-text .committed").text
    assert EXPECTED_WORD in final.lower(), final
    shoot("dictation")
    step(f"dictation done: {final!r}")

    # History: the dictation is there; pages; search as you type narrows it; copy and delete.
    show("history")
    wait.until(lambda d: EXPECTED_WORD in text_of("history-list").lower())
    total = api("GET", "/v1/history?limit=1")["total"]
    assert text_of("history-count") == f"1–50 of {total}", text_of("history-count")
    by_id("history-older").click()
    wait.until(lambda d: text_of("history-count") == f"51–{total} of {total}")
    assert not by_id("history-older").is_enabled()
    by_id("history-newer").click()
    wait.until(lambda d: text_of("history-count") == f"1–50 of {total}")
    driver.execute_cdp_cmd("Browser.grantPermissions", {
        "origin": ORIGIN, "permissions": ["clipboardReadWrite", "clipboardSanitizedWrite"]})
    first = driver.find_element(By.CSS_SELECTOR, "#history-list li")
    first.find_element(By.CSS_SELECTOR, "button[aria-label='Copy this text']").click()
    wait.until(lambda d: first.find_element(By.CSS_SELECTOR, "button[aria-label='Copy this text']").text == "Copied")
    copied = driver.execute_async_script(
        "const done = arguments[0]; navigator.clipboard.readText().then(done, e => done(String(e)))")
    assert copied == first.find_element(By.CSS_SELECTOR, ".text").text, copied
    step(f"history pages ({total} entries) and copies an entry's text")
    search = by_id("history-search")
    search.send_keys(EXPECTED_WORD)
    wait.until(lambda d: text_of("history-count").endswith(" of 1"))
    shoot("history")
    step(f"history search narrows {total} entries to 1")
    driver.find_element(By.CSS_SELECTOR, "#history-list button[aria-label='Delete this entry']").click()
    wait.until(lambda d: text_of("history-count") == "Nothing matches.")
    assert api("GET", "/v1/history?limit=1")["total"] == total - 1
    search.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    step("an entry deleted from the page is gone from the API")

    # Dictionary: add a term, add then edit a correction, remove the term.
    show("dictionary")
    wait.until(lambda d: "Kubernetes" in text_of("term-list"))
    by_id("term-input").send_keys("Siobhan", Keys.ENTER)
    wait.until(lambda d: "Siobhan" in text_of("term-list"))
    assert "Siobhan" in api("GET", "/v1/dictionary/terms")["terms"]
    by_id("correction-original").send_keys("verbatum")
    by_id("correction-replacement").send_keys("Verbatim", Keys.ENTER)
    wait.until(lambda d: "verbatum" in text_of("correction-table"))
    shoot("dictionary")
    driver.find_element(By.CSS_SELECTOR, "#correction-table button[aria-label='Edit verbatum']").click()
    replacement = by_id("correction-replacement")
    replacement.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    replacement.send_keys("Verbatim!", Keys.ENTER)
    wait.until(lambda d: "Verbatim!" in text_of("correction-table"))
    corrections = {c["original"]: c["replacement"] for c in api("GET", "/v1/dictionary/corrections")["corrections"]}
    assert corrections.get("verbatum") == "Verbatim!", corrections
    driver.find_element(By.CSS_SELECTOR, "#term-list button[aria-label='Edit Siobhan']").click()
    term = by_id("term-input")
    term.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    term.send_keys("Saoirse", Keys.ENTER)
    wait.until(lambda d: "Saoirse" in text_of("term-list"))
    terms = api("GET", "/v1/dictionary/terms")["terms"]
    assert "Saoirse" in terms and "Siobhan" not in terms, terms
    driver.find_element(By.CSS_SELECTOR, "#term-list button[aria-label='Remove Saoirse']").click()
    wait.until(lambda d: "Saoirse" not in text_of("term-list"))
    step("terms and corrections added, edited and removed")

    # Rules: a toggle switches the rule in the API.
    show("rules")
    wait.until(lambda d: "Docs" in text_of("rule-list"))
    before = {r["name"]: r["is_enabled"] for r in api("GET", "/v1/rules")["rules"]}
    driver.find_element(By.XPATH, "//ul[@id='rule-list']//label[contains(., 'Docs')]/input").click()
    wait.until(lambda d: {r["name"]: r["is_enabled"] for r in api("GET", "/v1/rules")["rules"]}["Docs"]
               != before["Docs"])
    shoot("rules")
    step("a rule toggled from the page")

    # Prompt actions: one added, edited and run on a history entry (sim mode's built-in chat
    # provider answers "[NAME] TEXT").
    show("actions")
    wait.until(lambda d: "No prompt actions" in text_of("action-list"))
    by_id("action-name").send_keys("Email")
    by_id("action-prompt").send_keys("Write it as a short email.")
    by_id("action-submit").click()
    wait.until(lambda d: "Email" in text_of("action-list"))
    driver.find_element(By.CSS_SELECTOR, "#action-list button[aria-label='Edit Email']").click()
    by_id("action-prompt").clear()
    by_id("action-prompt").send_keys("Write it as an email.")
    by_id("action-submit").click()
    wait.until(lambda d: "Write it as an email." in text_of("action-list"))
    actions = api("GET", "/v1/prompt-actions")["actions"]
    assert [(a["name"], a["prompt"]) for a in actions] == [("Email", "Write it as an email.")], actions
    shoot("actions")
    show("history")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#history-list button[aria-label='Run the prompt action on this entry']"))
    entry = driver.find_element(By.CSS_SELECTOR, "#history-list li")
    entry_text = entry.find_element(By.CSS_SELECTOR, ".text").text
    entry.find_element(By.CSS_SELECTOR, "button[aria-label='Run the prompt action on this entry']").click()
    wait.until(lambda d: entry.find_elements(By.CSS_SELECTOR, ".result"))
    result = entry.find_element(By.CSS_SELECTOR, ".result").text
    assert result == f"[Email] {entry_text}", (result, entry_text)
    shoot("history-action")
    step("a prompt action added, edited and run on a history entry")

    # Models: every engine's models; download one with its progress bar, select it.
    show("models")
    wait.until(lambda d: "moonshine-tiny" in text_of("model-table") and "tiny.en" in text_of("model-table"))
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='Download base']").click()
    bar = wait.until(lambda d: d.find_element(By.ID, "progress-base"))
    wait.until(lambda d: 0 < float(bar.get_attribute("value")) < float(bar.get_attribute("max")))
    shoot("models")
    step(f"download progress shown: {bar.get_attribute('value')} of {bar.get_attribute('max')}")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "button[aria-label='Remove base']"))
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='Select base']").click()
    wait.until(lambda d: text_of("status") == "Ready: whisper (base)")
    assert api("GET", "/v1/status")["model"] == "base"
    driver.find_element(By.CSS_SELECTOR, "button[aria-label='Select tiny.en']").click()
    wait.until(lambda d: text_of("status") == "Ready: whisper (tiny.en)")
    step("a model downloaded and selected from the page")

    # Settings: a change is saved at once; what belongs to this machine is not editable.
    show("settings")
    wait.until(lambda d: "maxDictationSeconds" in text_of("settings-list"))
    field = by_id("setting-maxDictationSeconds")
    field.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    field.send_keys("120", Keys.TAB)
    wait.until(lambda d: "Saved: 120" in text_of("settings-list"))
    by_id("setting-normalizeNumbers").click()
    wait.until(lambda d: "Saved: false" in text_of("settings-list"))
    assert not by_id("setting-apiServerRequiresAuthentication").is_enabled()
    field.send_keys(Keys.CONTROL, "a", Keys.DELETE)
    field.send_keys("1", Keys.TAB)
    wait.until(lambda d: "expected a whole number from 5 to 3600" in text_of("settings-list"))
    shoot("settings")
    exported = api("GET", "/v1/settings/export")["preferences"]
    assert exported["maxDictationSeconds"] == 120 and exported["normalizeNumbers"] is False, exported
    step("settings changed from the page, a bad value refused with the API's message")

    # The Recorder: live text and the output file.
    show("recorder")
    by_id("recorder-toggle").click()
    wait.until(lambda d: text_of("recorder-state") == "Recording…")
    WebDriverWait(driver, 30).until(
        lambda d: d.find_element(By.CSS_SELECTOR, "#recorder-text .committed").text)
    by_id("recorder-toggle").click()
    WebDriverWait(driver, 30).until(lambda d: text_of("recorder-file").startswith("Saved as "))
    shoot("recorder")
    step(f"recorder: {text_of('recorder-file')}")

    # Dark, following the system.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                           {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    show("history")
    wait.until(lambda d: text_of("history-count"))
    background = driver.execute_script("return getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 25, 24)", background
    shoot("history-dark")
    step("dark colours when the system asks for them")

    # 200 % zoom: the same window at twice the scale (550 CSS pixels wide); no view scrolls
    # sideways.
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": 550, "height": 450, "deviceScaleFactor": 2, "mobile": False})
    for view in ("dictation", "recorder", "history", "dictionary", "rules", "actions", "models", "settings"):
        driver.get(f"{ORIGIN}/#{view}")
        wait.until(lambda d: by_id(f"view-{view}").is_displayed())
        time.sleep(0.3)
        wide = driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert wide[0] <= wide[1], f"{view} at 200 %: {wide[0]} px wide in {wide[1]}"
        if view == "history":
            shoot("history-200")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    step("every view fits at 200 % zoom")

    # Keyboard: the views are links reached with Tab and opened with Enter.
    driver.get(ORIGIN + "/")
    driver.refresh()
    wait.until(lambda d: by_id("view-dictation").is_displayed())
    ActionChains(driver).send_keys(Keys.TAB).perform()
    assert driver.switch_to.active_element.text == "Dictation", driver.switch_to.active_element.text
    ActionChains(driver).send_keys(Keys.TAB, Keys.TAB).perform()
    assert driver.switch_to.active_element.text == "History", driver.switch_to.active_element.text
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait.until(lambda d: by_id("view-history").is_displayed())
    step("keyboard reaches and opens the views")

    # Signing out: the server forgets the session, the page its secret; the API then refuses.
    show("settings")
    by_id("sign-out").click()
    wait.until(lambda d: text_of("sign-out-state").startswith("Signed out"))
    assert driver.execute_script("return localStorage.length") == 0
    driver.get(ORIGIN + "/#history")
    wait.until(lambda d: by_id("error").is_displayed())
    assert "Missing or invalid API token" in text_of("error"), text_of("error")
    step("signed out: the page is refused again")
finally:
    driver.quit()
