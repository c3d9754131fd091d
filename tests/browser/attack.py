"""Pages of other local origins against Verbatim, in a real browser (Debian's chromium,
headless, through Selenium and chromedriver), as an attacker on the same machine would try it:
another local web server (a dev server, a notebook) serves a page that tries every request a
browser lets a page send to Verbatim without CORS, and records everything the browser sends to
it in turn. Then everything it received is replayed to Verbatim as a program would, with the
server's own `Origin` and `Sec-Fetch-Site: same-origin` added.

    attack.py VERBATIM_ORIGIN SIGN_IN_URL|-

With a sign-in URL the browser first signs in to Verbatim's page (so it holds the session
cookie, which browsers also send to every other port of the host). The token (for checking the
server's state as a script would) is in VERBATIM_API_TOKEN. Prints one line per step; exits
non-zero on the first failure: the server's state (dictation, the Recorder, history, the
dictionary, rules, settings, the token, the selected model, downloads) must not change.
"""

import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

VERBATIM, SIGN_IN_URL = sys.argv[1], sys.argv[2]
PORT = urllib.parse.urlsplit(VERBATIM).port
TOKEN = os.environ["VERBATIM_API_TOKEN"]
STARTED = time.monotonic()
FIRST_RULE = "0F8FAD5B-D9CB-469F-A165-70867728950E"

# Every route that changes something, with a body where it takes one.
CHANGES = [
    ("POST", "/v1/dictation/start", {}),
    ("POST", "/v1/dictation/stop", {}),
    ("POST", "/v1/recorder/start", {}),
    ("POST", "/v1/recorder/stop", {}),
    ("POST", "/v1/transcribe/local-file", {"path": "/etc/hostname"}),
    ("POST", "/v1/settings/import", {"schemaVersion": 1, "dictionaryEntries": [
        {"type": "term", "term": "Pwned", "isEnabled": True}], "preferences": {"maxDictationSeconds": 7}}),
    ("POST", "/page/token/rotate", None),
    ("POST", "/page/sign-out", None),
    ("POST", "/page/models/select?id=base", None),
    ("POST", "/page/models/download?id=base", None),
    ("PUT", "/v1/dictionary/terms", {"term": "Pwned"}),
    ("PUT", "/v1/dictionary/corrections", {"original": "the", "replacement": "pwned"}),
    ("PUT", f"/v1/rules/toggle?id={FIRST_RULE}", None),
    ("PUT", "/page/settings", {"key": "maxDictationSeconds", "value": 7}),
    ("DELETE", "/v1/history", None),
    ("DELETE", "/v1/dictionary/terms", {"term": "Kubernetes"}),
    ("DELETE", "/page/models?id=tiny.en", None),
]
# Routes a page could read from (it cannot read the answers without CORS, but must not even
# be answered with data).
READS = ["/v1/history", "/v1/dictation/events", "/v1/recorder/events", "/page/settings",
         "/v1/settings/export", "/login?code=guessed"]


def step(what):
    print(f"ok ({time.monotonic() - STARTED:.1f} s): {what}", flush=True)


def api(method, path, body=None, headers=None):
    """Verbatim called as a script would: (status, parsed body or text)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(VERBATIM + path, data=data, method=method)
    for name, value in (headers or {"Authorization": f"Bearer {TOKEN}"}).items():
        request.add_header(name, value)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        status, raw = refused.code, refused.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode(errors="replace")


def state():
    """Everything an attack could change, as the token holder sees it."""
    def read(path):
        status, body = api("GET", path)
        assert status == 200, (path, status, body)
        return body
    exported = read("/v1/settings/export")
    with open(os.environ["VERBATIM_DISCOVERY"]) as discovery:
        token = json.load(discovery)["token"]
    return {
        "dictation": read("/v1/dictation/status")["state"],
        "recorder": read("/v1/recorder/status")["recording"],
        "history": read("/v1/history?limit=1")["total"],
        "terms": read("/v1/dictionary/terms"),
        "corrections": read("/v1/dictionary/corrections"),
        "rules": {r["name"]: r["is_enabled"] for r in read("/v1/rules")["rules"]},
        "preferences": exported["preferences"],
        "model": read("/v1/status")["model"],
        "downloads": read("/page/downloads"),
        "token": token,
    }


def attack_page():
    """The attacker's page: forms of every enctype into hidden frames, no-cors and cors
    fetches, a WebSocket, event streams and images; its title turns "done" when all is sent."""
    body = json.dumps({"schemaVersion": 1, "preferences": {"maxDictationSeconds": 7}})
    forms = []
    for n, (method, path, _) in enumerate(CHANGES):
        for enctype in ("application/x-www-form-urlencoded", "multipart/form-data", "text/plain"):
            frame = f"f{n}-{enctype.split('/')[1]}"
            forms.append(
                f'<iframe name="{frame}" hidden></iframe>'
                f'<form method="POST" action="{VERBATIM}{path}" enctype="{enctype}" target="{frame}">'
                f'<input name=\'{body[:-1]}, "x": "\' value=\'"}}\'></form>')
    script = """
const target = %(target)s, changes = %(changes)s, reads = %(reads)s;
const sent = [];
for (const form of document.forms) { form.submit(); }
for (const [method, path, body] of changes) {
  const text = body === null ? undefined : JSON.stringify(body);
  // Without CORS a page may send only simple requests: POST with a simple type.
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
    sent.push(fetch(target + path, {method: "POST", mode: "no-cors", credentials: "include",
      headers: {"Content-Type": type}, body: text}).catch(() => null));
  }
  // Anything else needs a preflight, which is never granted.
  sent.push(fetch(target + path, {method, mode: "cors", credentials: "include",
    headers: {"Content-Type": "application/json"}, body: text}).catch(() => null));
}
for (const path of reads) {
  sent.push(fetch(target + path, {mode: "no-cors", credentials: "include"}).catch(() => null));
  const image = new Image(); image.src = target + path;
  if (path.endsWith("/events")) {
    const events = new EventSource(target + path, {withCredentials: true});
    setTimeout(() => events.close(), 2000);
  }
}
const ws = target.replace("http://", "ws://") + "/v1/realtime?intent=transcription";
for (const protocols of [[], ["realtime"]]) {
  try {
    const socket = new WebSocket(ws, protocols);
    socket.onopen = () => socket.send(JSON.stringify({type: "input_audio_buffer.append", audio: "AAAA"}));
  } catch (e) {}
}
Promise.all(sent).then(() => setTimeout(() => { document.title = "done"; }, 3000));
""" % {"target": json.dumps(VERBATIM), "changes": json.dumps(CHANGES), "reads": json.dumps(READS)}
    return f"<!doctype html><title>attack</title>{''.join(forms)}<script>{script}</script>"


class Attacker(http.server.BaseHTTPRequestHandler):
    """The other local server: serves the attack page and keeps every request it receives."""
    received = []

    def answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        Attacker.received.append({"method": self.command, "path": self.path,
                                  "headers": dict(self.headers.items()),
                                  "body": self.rfile.read(length).decode(errors="replace")})
        page = attack_page().encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    do_GET = do_POST = answer  # noqa: N815

    def log_message(self, *args):
        pass


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))


def replay(received):
    """Sends Verbatim everything the other server received, as a program that adds the
    server's own Origin would: no change may be accepted."""
    forwarded = {}
    for request in received:
        for name, value in request["headers"].items():
            if name.lower() not in ("host", "content-length", "connection"):
                forwarded[name] = value
    forwarded["Origin"] = VERBATIM
    forwarded["Sec-Fetch-Site"] = "same-origin"
    for method, path, body in CHANGES:
        status, answer = api(method, path, body, forwarded)
        assert status in (401, 403), (method, path, status, answer)
    for path in READS[:-1]:
        status, answer = api("GET", path, None, forwarded)
        assert status in (401, 403), (path, status, answer)
    return forwarded


driver = browser()
wait = WebDriverWait(driver, 30)
attacker = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
attacker.daemon_threads = True
threading.Thread(target=attacker.serve_forever, daemon=True).start()
try:
    signed_in = SIGN_IN_URL != "-"
    if signed_in:
        driver.get(SIGN_IN_URL)
        wait.until(lambda d: d.execute_script("return document.getElementById('status').textContent")
                   .startswith("Ready"))
        assert driver.get_cookie("verbatim_session"), "no session cookie"
        step("signed in to Verbatim's page")
    before = state()
    for host in ("127.0.0.1", "localhost"):
        driver.get(f"http://{host}:{attacker.server_address[1]}/")
        wait.until(lambda d: d.title == "done")
        step(f"the page of http://{host}:{attacker.server_address[1]} sent every request it could")
    time.sleep(1)
    after = state()
    changed = {key: (before[key], after[key]) for key in before if before[key] != after[key]}
    assert not changed, changed
    step("nothing changed: " + ", ".join(sorted(before)))
    cookies = [r["headers"].get("Cookie", "") for r in Attacker.received]
    if signed_in:
        assert any("verbatim_session=" in c for c in cookies), cookies
        step("the browser sent Verbatim's session cookie to the other server")
        forwarded = replay(Attacker.received)
        assert state() == before
        step(f"replaying what it received ({', '.join(sorted(forwarded))}) is refused")
        # The page itself still works on its own origin.
        driver.get(VERBATIM + "/#history")
        wait.until(lambda d: d.execute_script(
            "return document.getElementById('history-count').textContent"))
        step("Verbatim's own page still signs in and shows history")
finally:
    driver.quit()
    attacker.shutdown()
