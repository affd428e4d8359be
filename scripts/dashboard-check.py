#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium driven by Selenium (chromium and
chromium-driver from Debian, selenium from PyPI) against `cirrus serve` on a loopback port.

  scripts/dashboard-check.py [--cirrus PATH] [--screenshots DIR]

Seeds 5 places in Paris (with locations) and 2 far away (one by the antimeridian, one in
Svalbard), then in the page: connects with the tokens, picks the record type, types a predicate
CloudKit refuses (OR) and expects the caret under OR with the checker's message, fixes it, runs
it sorted with a page size of 2, pages with the cursor, explains it (plan tree with estimated and
actual rows), opens a record, edits a field and saves it (then checks through the API that the
record changed and its change tag moved); runs a NEAR query round `$here` and checks the map
(a point per record in the circle, the circle drawn, the circle's shape across the antimeridian
and round a pole), clicks the map to move `$here`; opens the Deployment pane, reviews the
promotion, checks that the button stays disabled until the container's name is typed, promotes,
and checks through the API that production has the schema; then resets development through
the same pane's confirmation and checks that development is empty and production is not. Before
the reset, the Logs pane (a refused query sent by the script is the newest error; no token shows)
and the Telemetry pane (charts of requests and latency for records/query) are checked. A screenshot at each step (default
directory: .build/dashboard-screenshots). Exit status 1 on any failure. Bounded: every wait is
at most 10 s.
"""

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

from cirrus_test_server import CONTAINER, ROOT, Server, cirrus_binary

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait


PLACES = [("Louvre", "museum", 48.8606, 2.3376), ("Café de Flore", "cafe", 48.854, 2.3325),
          ("Orsay", "museum", 48.86, 2.3266), ("Les Deux Magots", "cafe", 48.854, 2.333),
          ("Pompidou", "museum", 48.8607, 2.3522)]
FAR = [("Taveuni", "island", -16.85, 179.95), ("Longyearbyen", "town", 78.2232, 15.6267)]
HERE = (48.8583, 2.3375)  # Pont des Arts: within 1 km of all but Pompidou


def post(server, operation, body, user=None, base=None):
    query = f"ckAPIToken={server.token}" + (f"&ckWebAuthToken={user}" if user else "")
    base = base or f"{server.base}/public"
    request = urllib.request.Request(f"{base}/{operation}?{query}", data=json.dumps(body).encode(),
                                     method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def view_box(driver):
    """The map's viewBox as four numbers (Selenium's get_attribute misses SVG's camel case)."""
    text = driver.execute_script("return document.getElementById('map').getAttribute('viewBox')")
    return [float(v) for v in (text or "").split()]


def check_map(driver, wait, shot):
    """A NEAR query round $here: the points in the circle and the circle on the map; the circle's
    shape where the projection is hardest; a click on the map moves $here."""
    here = driver.find_element(By.ID, "here")
    here.clear()
    here.send_keys(f"{HERE[0]}, {HERE[1]}")
    predicate = driver.find_element(By.ID, "predicate")
    predicate.clear()
    predicate.send_keys("distanceToLocation:fromLocation:(location, $here) < 1")
    wait.until(EC.text_to_be_present_in_element((By.ID, "check-message"), "ok"))
    Select(driver.find_element(By.ID, "sort-field")).select_by_visible_text("(none)")
    size = driver.find_element(By.ID, "page-size")
    size.clear()
    size.send_keys("20")
    driver.find_element(By.ID, "run").click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "map-status"), "circle: 1 km"))
    def points():
        # Points are redrawn as pages arrive; ones found a moment ago may be gone.
        try:
            return sorted(p.get_attribute("data-record-name")
                          for p in driver.find_elements(By.CSS_SELECTOR, "#map circle.point[data-record-name]"))
        except StaleElementReferenceException:
            return None

    wait.until(lambda d: points() == ["place-0", "place-1", "place-2", "place-3"])
    circle = driver.find_element(By.ID, "query-circle").get_attribute("d")
    assert circle.count("M") == 3 and circle.count("L") > 300, circle[:200]  # 128 points, three shifts
    view = view_box(driver)
    assert view[2] < 0.1, f"the view should fit the 1 km circle, not the world: {view}"
    print(f"  map: points {points()}, view {view}")
    shot("map-near", show="map")

    # The projection's hard cases, through the module itself.
    shapes = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import('/dashboard/map.js').then((m) => {
          const shape = (lat, lon, metres) => {
            const c = m.queryCircle(lat, lon, metres);
            const lons = c.ring.map((p) => p[0]), lats = c.ring.map((p) => p[1]);
            return {kind: c.kind, n: c.ring.length, west: Math.min(...lons), east: Math.max(...lons),
                    south: Math.min(...lats), north: Math.max(...lats), rule: m.circlePath(c).rule};
          };
          done({antimeridian: shape(-16.85, 179.95, 100000), pole: shape(85, 40, 1000000),
                south: shape(-89, 0, 300000), both: shape(0, 0, 12000000), all: shape(0, 0, 2.1e7)});
        }).catch((e) => done({error: String(e)}));
    """)
    assert "error" not in shapes, shapes
    a = shapes["antimeridian"]
    assert a["kind"] == "plain" and a["west"] < 180 < a["east"] and a["east"] - a["west"] < 3, a
    p = shapes["pole"]
    assert p["kind"] == "north" and p["north"] == 90 and p["east"] - p["west"] >= 359.9, p
    s = shapes["south"]
    assert s["kind"] == "south" and s["south"] == -90, s
    assert shapes["both"]["kind"] == "both" and shapes["both"]["rule"] == "evenodd", shapes["both"]
    assert shapes["all"]["kind"] == "all", shapes["all"]
    print(f"  map shapes: {shapes}")

    # World view: the far records are drawn too when a page has them.
    predicate.clear()
    predicate.send_keys("rank >= 5")
    wait.until(EC.text_to_be_present_in_element((By.ID, "check-message"), "ok"))
    driver.find_element(By.ID, "run").click()
    wait.until(lambda d: points() == ["place-5", "place-6"])
    view = view_box(driver)
    assert view[2] >= 100, f"Fiji and Svalbard need a wide view: {view}"
    shot("map-far", show="map")
    driver.find_element(By.ID, "map-world").click()
    wait.until(lambda d: view_box(d) == [0, 0, 360, 180])
    # A click in the middle of the world view is (0°, 0°).
    svg = driver.find_element(By.ID, "map")
    webdriver.ActionChains(driver).move_to_element(svg).click().perform()
    wait.until(lambda d: d.find_element(By.ID, "here").get_attribute("value") != "")
    lat, lon = (float(v) for v in driver.find_element(By.ID, "here").get_attribute("value").split(","))
    assert abs(lat) < 2 and abs(lon) < 2, (lat, lon)
    shot("map-world", show="map")

    # A circle round the north pole (holding Longyearbyen), one over the antimeridian (Taveuni).
    for centre, km, expected, name in [((85, 40), 1500, ["place-6"], "map-pole"),
                                       ((-16.5, -178.5), 300, ["place-5"], "map-antimeridian")]:
        here.clear()
        here.send_keys(f"{centre[0]}, {centre[1]}")
        predicate.clear()
        predicate.send_keys(f"distanceToLocation:fromLocation:(location, $here) < {km}")
        wait.until(EC.text_to_be_present_in_element((By.ID, "check-message"), "ok"))
        driver.find_element(By.ID, "run").click()
        wait.until(EC.text_to_be_present_in_element((By.ID, "map-status"), f"circle: {km} km"))
        wait.until(lambda d: points() == expected)
        shot(name, show="map")


def check_promotion(driver, wait, shot, server):
    """Deployment: review, the confirmation naming the container, promote; production has Place."""
    production = server.base.replace("/development", "/production") + "/public"
    before = post(server, "cirrus/schema", {}, base=production)
    assert "Place" not in [t["name"] for t in before["recordTypes"]], before
    driver.find_element(By.ID, "management-token").send_keys(server.management)
    driver.find_element(By.ID, "review-promotion").click()
    wait.until(EC.visibility_of_element_located((By.ID, "promotion-dialog")))
    wait.until(EC.text_to_be_present_in_element((By.ID, "promotion-changes"), "record type Place"))
    assert driver.find_element(By.ID, "promotion-container").text == CONTAINER
    button = driver.find_element(By.ID, "promote")
    confirm = driver.find_element(By.ID, "promotion-confirm")
    assert not button.is_enabled(), "the promote button must wait for the container's name"
    confirm.send_keys("iCloud.wrong")
    assert not button.is_enabled(), "a wrong name must not enable the promote button"
    confirm.clear()
    confirm.send_keys(CONTAINER)
    wait.until(lambda d: button.is_enabled())
    shot("promotion-confirm")
    button.click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "deployment-message"), "promoted to production"))
    after = post(server, "cirrus/schema", {}, base=production)
    place = next((t for t in after["recordTypes"] if t["name"] == "Place"), None)
    assert place and {f["name"] for f in place["fields"]} >= {"name", "kind", "rank", "location"}, after
    shot("promoted", show="deployment")


def check_logs_and_telemetry(driver, wait, shot, server):
    """Logs: a refused query sent from here is the newest error, with its record type and code,
    and no token shows; Telemetry: the charts are drawn (bars of requests, lines of latency)."""
    try:
        post(server, "records/query", {"query": {"recordType": "Place", "filterBy": [
            {"fieldName": "name", "comparator": "LESS_THAN", "fieldValue": {"value": 3}}]}})
        raise AssertionError("the bad query was accepted")
    except urllib.error.HTTPError as e:
        assert e.code == 400, e.code
    driver.find_element(By.ID, "log-errors").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#logs tbody tr"))
    first = driver.find_elements(By.CSS_SELECTOR, "#logs tbody tr")[0].find_elements(By.TAG_NAME, "td")
    cells = [c.text for c in first]
    assert cells[1] == "records/query" and cells[4] == "Place" and cells[5] == "400" and cells[6] == "BAD_REQUEST", cells
    assert all(r.get_attribute("class") == "failed" for r in driver.find_elements(By.CSS_SELECTOR, "#logs tbody tr"))
    driver.find_element(By.ID, "log-errors").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#logs tbody tr.failed"))
               < len(d.find_elements(By.CSS_SELECTOR, "#logs tbody tr")))
    table = driver.find_element(By.ID, "logs").text
    for secret in (server.token, server.alice, server.management, "Café de Flore"):
        assert secret not in table, f"the log shows {secret!r}"
    shot("logs", show="logs-panel")
    driver.find_element(By.ID, "refresh-telemetry").click()
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-requests .series rect"))
    Select(driver.find_element(By.ID, "telemetry-operation")).select_by_value("records/query")
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#chart-latency .series path")) == 3)
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "#chart-errors .series circle"))
    status = driver.find_element(By.ID, "telemetry-status").text
    assert "requests in the last hour" in status, status
    shot("telemetry", show="telemetry-panel")


def check_reset(driver, wait, shot, server):
    """Deployment: reset development after the confirmation naming the container; development
    is empty (its schema only Users), production still has Place and its records."""
    production = server.base.replace("/development", "/production") + "/public"
    driver.find_element(By.ID, "review-reset").click()
    wait.until(EC.visibility_of_element_located((By.ID, "reset-dialog")))
    assert driver.find_element(By.ID, "reset-container").text == CONTAINER
    button = driver.find_element(By.ID, "reset")
    confirm = driver.find_element(By.ID, "reset-confirm")
    assert not button.is_enabled(), "the reset button must wait for the container's name"
    confirm.send_keys(CONTAINER[:-1])
    assert not button.is_enabled(), "a wrong name must not enable the reset button"
    confirm.clear()
    confirm.send_keys(CONTAINER)
    wait.until(lambda d: button.is_enabled())
    shot("reset-confirm")
    button.click()
    wait.until(EC.text_to_be_present_in_element((By.ID, "deployment-message"), "reset the development environment"))
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#results tbody tr"))
    development = post(server, "cirrus/schema", {})
    assert [t["name"] for t in development["recordTypes"]] == ["Users"], development
    gone = post(server, "records/lookup", {"records": [{"recordName": "place-1"}]})["records"][0]
    assert gone.get("serverErrorCode") == "NOT_FOUND", gone
    after = post(server, "cirrus/schema", {}, base=production)
    assert "Place" in [t["name"] for t in after["recordTypes"]], after
    shot("reset", show="deployment")


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

    def shot(name, show=None):
        if show:
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", driver.find_element(By.ID, show))
        step[0] += 1
        path = os.path.join(args.screenshots, f"{step[0]:02d}-{name}.png")
        driver.save_screenshot(path)
        print(f"  screenshot {path}")

    try:
        post(server, "records/modify", {"operations": [
            {"operationType": "create", "record": {"recordName": f"place-{i}", "recordType": "Place", "fields": {
                "name": {"value": name}, "kind": {"value": kind}, "rank": {"value": i},
                "location": {"value": {"latitude": lat, "longitude": lon}, "type": "LOCATION"}}}}
            for i, (name, kind, lat, lon) in enumerate(PLACES + FAR)]}, server.alice)
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
        # The page's locations are on the map (no circle: the query has no NEAR).
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#map circle.point[data-record-name]")) == 2)
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
        driver.find_element(By.ID, "close-record").click()

        check_map(driver, wait, shot)
        check_promotion(driver, wait, shot, server)
        check_logs_and_telemetry(driver, wait, shot, server)
        check_reset(driver, wait, shot, server)
        print("dashboard: connect, error caret, query, next page, explain, edit and save, map, promotion, logs, "
              "telemetry, reset: ok")
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
