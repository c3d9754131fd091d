"""Helpers of scripts/bench-page.

    bench_page.py history N          a settings backup with N generated history entries
    bench_page.py measure URL LOADS  sign in with URL, then time first loads and search typing
"""
import json
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone

WORDS = ("the meeting is moved to thursday and we will send the report before friday please "
         "check the numbers again with the team transcription notes café réunion budget review "
         "customer feedback release schedule design update invoice travel weather kubernetes "
         "server deploy question answer morning afternoon evening project plan summary draft "
         "letter call email follow up agenda minutes action item decision owner deadline").split()
APPS = ["Text Editor", "Thunderbird", "Firefox", "Terminal", "Slack", "LibreOffice Writer",
        "Obsidian", "Code", "Evolution", "Chromium", "Gedit", "Kate"]


def history(count):
    rng = random.Random(7)
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    now = datetime.now(timezone.utc)
    entries = []
    for i in range(count):
        words = rng.choices(WORDS, weights, k=rng.randint(8, 40))
        text = " ".join(words).capitalize() + "."
        entries.append({
            "id": f"{i:08X}-0000-4000-8000-{rng.getrandbits(48):012X}",
            "text": text, "rawText": text.lower(),
            "timestamp": (now - timedelta(minutes=i + 1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "appName": APPS[i % len(APPS)], "duration": 3.0, "language": "en",
            "engine": "whisper", "model": "tiny.en", "wordsCount": len(words),
        })
    json.dump({"schemaVersion": 1, "history": entries,
               "preferences": {"historyRetentionDays": 0}}, sys.stdout)


def percentile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round((len(ordered) - 1) * q))]


def measure(url, loads):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                f"--user-data-dir={tempfile.mkdtemp()}"):
        options.add_argument(arg)
    driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
    try:
        driver.get(url)
        origin = url.split("/login")[0]
        times, sizes = [], []
        for _ in range(loads):
            driver.get(origin + "/#models")
            driver.refresh()
            WebDriverWait(driver, 10).until(
                lambda d: d.execute_script("return document.readyState") == "complete")
            nav = driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                "const r = performance.getEntriesByType('resource')"
                "  .filter(e => e.name.includes('/assets/'));"
                "return [n.loadEventEnd - n.startTime, n.transferSize"
                "  + r.reduce((s, e) => s + e.transferSize, 0)];")
            times.append(nav[0])
            sizes.append(nav[1])
        driver.get(origin + "/#history")
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.ID, "history-count").text.endswith(" entries")
            or " of " in d.find_element(By.ID, "history-count").text)
        box = driver.find_element(By.ID, "history-search")
        driver.execute_script("performance.clearMeasures('history-search')")
        typed = ["meeting", "thursday report", "café", "transcr", "kubernetes deploy", "zzz"]
        for query in typed:
            box.clear()
            time.sleep(0.3)
            for char in query:
                box.send_keys(char)
                time.sleep(0.12)  # about eight keystrokes a second
            time.sleep(0.5)
        searches = driver.execute_script(
            "return performance.getEntriesByName('history-search').map(e => e.duration)")
        total = driver.find_element(By.ID, "history-count").text
    finally:
        driver.quit()
    print("| Measure | median | p90 | max | n |")
    print("|---|---|---|---|---|")
    print(f"| first load (navigation start to load end) | {statistics.median(times):.1f} ms "
          f"| {percentile(times, 0.9):.1f} ms | {max(times):.1f} ms | {len(times)} |")
    print(f"| bytes transferred per load | {statistics.median(sizes):,.0f} B | | {max(sizes):,.0f} B | {len(sizes)} |")
    print(f"| keystroke to list shown (history search) | {statistics.median(searches):.1f} ms "
          f"| {percentile(searches, 0.9):.1f} ms | {max(searches):.1f} ms | {len(searches)} |")
    print(f"(queries typed: {', '.join(typed)}; last answer: {total})")
    print("(each load, ms: " + " ".join(f"{t:.0f}" for t in times) + ")")


if __name__ == "__main__":
    if sys.argv[1] == "history":
        history(int(sys.argv[2]))
    else:
        measure(sys.argv[2], int(sys.argv[3]))
