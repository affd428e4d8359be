#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium driven by Selenium (chromium and
chromium-driver from Debian, selenium from PyPI) against `cirrus serve` on a loopback port.

  scripts/dashboard-check.py [--cirrus PATH] [--screenshots DIR]

Seeds 5 places, then in the page: connects with the tokens, picks the record type, types a
predicate CloudKit refuses (OR) and expects the caret under OR with the checker's message, fixes
it, runs it sorted with a page size of 2, pages with the cursor, explains it (plan tree with
estimated and actual rows), opens a record, edits a field
and saves it (then checks through the API that the record changed and its change tag moved),
and saves a screenshot at each step (default directory: .build/dashboard-screenshots). Exit
status 1 on any failure. Bounded: every wait is at most 10 s.
"""

import argparse
import json
import os
import sys
import urllib.request

from cirrus_test_server import ROOT, Server, cirrus_binary

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait


def post(server, operation, body, user=None):
    query = f"ckAPIToken={server.token}" + (f"&ckWebAuthToken={user}" if user else "")
    request = urllib.request.Request(f"{server.base}/public/{operation}?{query}", data=json.dumps(body).encode(),
                                     method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cirrus")
    parser.add_argument("--screenshots", default=os.path.join(ROOT, ".build", "dashboard-screenshots"))
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    server = Server(cirrus_binary(args.cirrus))
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,900",
                 "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"]:
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    driver = None
    step = [0]

    def shot(name):
        step[0] += 1
        path = os.path.join(args.screenshots, f"{step[0]:02d}-{name}.png")
        driver.save_screenshot(path)
        print(f"  screenshot {path}")

    try:
        post(server, "records/modify", {"operations": [
            {"operationType": "create", "record": {"recordName": f"place-{i}", "recordType": "Place", "fields": {
                "name": {"value": name}, "kind": {"value": kind}, "rank": {"value": i}}}}
            for i, (name, kind) in enumerate([("Louvre", "museum"), ("Café de Flore", "cafe"),
                                              ("Orsay", "museum"), ("Les Deux Magots", "cafe"),
                                              ("Pompidou", "museum")])]}, server.alice)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        driver.set_page_load_timeout(10)
        wait = WebDriverWait(driver, 10)
        driver.get(server.origin + "/")
        driver.find_element(By.ID, "api-token").send_keys(server.token)
        driver.find_element(By.ID, "web-auth-token").send_keys(server.alice)
        driver.find_element(By.ID, "connect").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "caller"), "signed in as _alice"))
        wait.until(EC.text_to_be_present_in_element((By.ID, "schema"), "rank"))
        Select(driver.find_element(By.ID, "record-type")).select_by_visible_text("Place")
        shot("connected")

        predicate = driver.find_element(By.ID, "predicate")
        predicate.send_keys("kind == 'cafe' OR rank > 1")
        wait.until(EC.text_to_be_present_in_element((By.ID, "check-message"), "error:"))
        caret = driver.find_element(By.ID, "caret").text
        assert caret.strip() == "^^" and caret.index("^") == len("kind == 'cafe' "), f"caret: {caret!r}"
        message = driver.find_element(By.ID, "check-message").text
        print(f"  checker: {message!r}")
        shot("error-caret")

        predicate.clear()
        predicate.send_keys("rank >= 1")
        wait.until(EC.text_to_be_present_in_element((By.ID, "check-message"), "ok"))
        Select(driver.find_element(By.ID, "sort-field")).select_by_visible_text("rank")
        size = driver.find_element(By.ID, "page-size")
        size.clear()
        size.send_keys("2")
        driver.find_element(By.ID, "run").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "status"), "more on the next page"))
        def names():
            # The table is replaced as pages arrive; rows found a moment ago may be gone.
            try:
                return [r.get_attribute("data-record-name")
                        for r in driver.find_elements(By.CSS_SELECTOR, "#results tbody tr")]
            except StaleElementReferenceException:
                return None

        assert names() == ["place-1", "place-2"], names()
        shot("first-page")

        driver.find_element(By.ID, "next-page").click()
        wait.until(lambda d: names() == ["place-3", "place-4"])
        shot("second-page")

        driver.find_element(By.ID, "explain").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "plan-tree"), "actual"))
        tree = driver.find_element(By.ID, "plan-tree").text
        assert "est " in tree and "rank" in tree, tree
        print(f"  plan: {tree!r}")
        shot("explain")

        driver.find_element(By.CSS_SELECTOR, "#results tbody tr[data-record-name='place-3']").click()
        # (Headings are shown in capitals: compare the text itself, not its rendering.)
        wait.until(lambda d: d.find_element(By.ID, "record-name").get_attribute("textContent") == "place-3")
        old_tag = driver.find_element(By.ID, "record-tag").text
        editor = driver.find_element(By.ID, "record-fields")
        fields = json.loads(editor.get_attribute("value"))
        fields["name"]["value"] = "Les Deux Magots (edited)"
        editor.clear()
        editor.send_keys(json.dumps(fields))
        driver.find_element(By.ID, "save").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "record-message"), "saved; new change tag"))
        wait.until(EC.text_to_be_present_in_element((By.ID, "results"), "Les Deux Magots (edited)"))
        shot("record-saved")
        stored = post(server, "records/lookup", {"records": [{"recordName": "place-3"}]})["records"][0]
        assert stored["fields"]["name"]["value"] == "Les Deux Magots (edited)", stored
        assert stored["recordChangeTag"] != old_tag, (stored["recordChangeTag"], old_tag)
        print("dashboard: connect, error caret, query, next page, explain, edit and save: ok")
        return 0
    except Exception as e:  # noqa: BLE001 — any failure fails the check, with a last screenshot
        import traceback
        print(f"dashboard: FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        traceback.print_tb(e.__traceback__, limit=3)
        if driver is not None:
            shot("failure")
            print(driver.find_element(By.TAG_NAME, "body").text[:2000])
        return 1
    finally:
        if driver is not None:
            driver.quit()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
