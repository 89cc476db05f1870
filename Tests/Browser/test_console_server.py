"""Browser tests of the console's Server page (`/console/#/server`): the live graphs drawn from
`/metrics`, the "Recent problems" panel from `/.hearth/logs`, and the polling behind them,
against a real `hearth serve --demo`. The Prometheus parser the graphs use is tested on its own
in the same chromium, by importing its module.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from pathlib import Path

import requests
from selenium.webdriver.common.by import By

from browser_support import launch_server, stop_server, wait_for, wait_until
from harness import free_port  # a port nothing listens on (connections to it are refused)
from test_console import admin_headers, no_page_errors, open_console

GRAPHS = "[data-testid=server-graphs]"


# MARK: - Helpers

def graph_value(driver, graph, series) -> float | None:
    """The number a graph's legend shows for a series now (None while it is measuring)."""
    raw = driver.find_element(By.CSS_SELECTOR, f"[data-testid=graph-{graph}-{series}]").get_attribute("data-value")
    return float(raw) if raw else None


def graph_text(driver, graph, series) -> str:
    return driver.find_element(By.CSS_SELECTOR, f"[data-testid=graph-{graph}-{series}]").text


def graph_points(driver) -> int:
    """How many readings the graphs hold (each poll of /metrics adds one)."""
    return int(driver.find_element(By.CSS_SELECTOR, "[data-testid=graph-requests]").get_attribute("data-points"))


def poll_ms(driver) -> int:
    return int(driver.find_element(By.CSS_SELECTOR, GRAPHS).get_attribute("data-poll-ms"))


# Counts the page's reads of /metrics, from its first script on, by wrapping fetch.
_COUNT_METRICS_READS = """
window.__metricsReads = 0;
const originalFetch = window.fetch;
window.fetch = function (input, init) {
  const url = typeof input === 'string' ? input : input.url;
  if (new URL(url, location.href).pathname === '/metrics') window.__metricsReads += 1;
  return originalFetch.call(this, input, init);
};
"""


def metrics_reads(driver) -> int:
    return driver.execute_script("return window.__metricsReads")


def reads_over(driver, milliseconds) -> int:
    """The reads of /metrics the page makes in the next ``milliseconds``. Proving that nothing
    happens takes watching for a while: this watches for a few polling intervals."""
    return driver.execute_async_script("""
        const [milliseconds, done] = arguments;
        const start = window.__metricsReads;
        setTimeout(() => done(window.__metricsReads - start), milliseconds);
    """, milliseconds)


def set_visibility(driver, state):
    """Makes the page believe it is hidden or shown, as switching tabs does."""
    driver.execute_script("""
        if (arguments[0] === 'visible') delete document.visibilityState;
        else Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' });
        document.dispatchEvent(new Event('visibilitychange'));
    """, state)


def run_module_checks(driver, server, script) -> dict:
    """Runs ``script`` (an async function body that returns a JSON-able value) in the page,
    with the console's metric modules imported as ``prometheus`` and ``readings``."""
    driver.get(f"{server.url}/console/")
    wait_for(driver, "[data-testid=admin-token-input]")
    result = driver.execute_async_script(f"""
        const done = arguments[arguments.length - 1];
        (async () => {{
          const prometheus = await import('/console/server/prometheus.js');
          const readings = await import('/console/server/readings.js');
          {script}
        }})().then((value) => done({{ value }}), (error) => done({{ error: String(error && error.stack || error) }}));
    """)
    assert "error" not in result, result.get("error")
    return result["value"]


# MARK: - The Prometheus parser and quantiles, in the page

EXPOSITION = r"""
# HELP hearth_requests_total Requests.
# TYPE hearth_requests_total counter
hearth_requests_total{operation="put",status="200",transport="rest"} 10
hearth_requests_total{operation="get",status="503",transport="rest"} 1
hearth_requests_total{operation="get",status="200",transport="admin"} 4 1700000000000
weird_label{path="a\"b\\c\nd",other="x,y}"} +Inf
not a sample line
gauge_without_labels 2.5e3
nan_value NaN
empty_braces{} 7
"""


def test_the_parser_reads_prometheus_text(browser, server):
    result = run_module_checks(browser, server, f"""
        const scrape = prometheus.parsePrometheus({json.dumps(EXPOSITION)});
        return {{
          samples: scrape.samples.map((s) => [s.name, s.labels, Number.isFinite(s.value) ? s.value : String(s.value)]),
          type: scrape.types.get('hearth_requests_total'),
          rest: prometheus.valueOf(scrape, 'hearth_requests_total', {{ transport: 'rest' }}),
          errors: prometheus.valueOf(scrape, 'hearth_requests_total', {{ status: /^5\\d\\d$/ }}),
          missing: prometheus.valueOf(scrape, 'no_such_metric'),
        }};
    """)
    assert result["samples"] == [
        ["hearth_requests_total", {"operation": "put", "status": "200", "transport": "rest"}, 10],
        ["hearth_requests_total", {"operation": "get", "status": "503", "transport": "rest"}, 1],
        ["hearth_requests_total", {"operation": "get", "status": "200", "transport": "admin"}, 4],
        ["weird_label", {"path": 'a"b\\c\nd', "other": "x,y}"}, "Infinity"],
        ["gauge_without_labels", {}, 2500],
        ["nan_value", {}, "NaN"],
        ["empty_braces", {}, 7],
    ]
    assert result["type"] == "counter"
    assert result["rest"] == 11 and result["errors"] == 1 and result["missing"] is None


def test_rates_and_quantiles_come_from_the_difference_of_two_scrapes(browser, server):
    before = """
hearth_requests_total{operation="put",status="200",transport="rest"} 100
hearth_requests_total{operation="get",status="200",transport="admin"} 7
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.001"} 500
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.01"} 500
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.1"} 500
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="+Inf"} 500
hearth_writes_total{database="default"} 1000
hearth_commits_total{database="default"} 400
hearth_realtime_requests_total{action="put"} 3
"""
    # Between the scrapes, two seconds: 20 REST puts, 10 more in a series that is new (5xx),
    # long-polling and admin requests (both "other"), realtime messages, a reset counter
    # (commits: the server restarted, so its 30 all count), and 100 timed requests: 50 under
    # 1 ms, 40 more under 10 ms, 10 more under 100 ms.
    after = """
hearth_requests_total{operation="put",status="200",transport="rest"} 120
hearth_requests_total{operation="get",status="503",transport="rest"} 10
hearth_requests_total{operation="get",status="200",transport="admin"} 9
hearth_requests_total{operation="get",status="200",transport="long-polling"} 4
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.001"} 530
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.01"} 560
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="0.1"} 570
hearth_request_duration_seconds_bucket{operation="put",transport="rest",le="+Inf"} 570
hearth_request_duration_seconds_bucket{operation="get",transport="admin",le="0.001"} 20
hearth_request_duration_seconds_bucket{operation="get",transport="admin",le="0.01"} 30
hearth_request_duration_seconds_bucket{operation="get",transport="admin",le="0.1"} 30
hearth_request_duration_seconds_bucket{operation="get",transport="admin",le="+Inf"} 30
hearth_writes_total{database="default"} 1040
hearth_writes_total{database="other"} 2
hearth_commits_total{database="default"} 30
hearth_realtime_requests_total{action="put"} 9
hearth_realtime_requests_total{action="listen"} 2
hearth_rules_denials_total{access="write",database="default"} 6
hearth_connections{kind="listens"} 12
hearth_connections{kind="realtime"} 3
hearth_resident_memory_bytes 123456789
"""
    result = run_module_checks(browser, server, f"""
        const {{ parsePrometheus, bucketIncrease, histogramQuantile }} = prometheus;
        const before = parsePrometheus({json.dumps(before)});
        const after = parsePrometheus({json.dumps(after)});
        const buckets = bucketIncrease(before, after, 'hearth_request_duration_seconds');
        const inf = (list) => list.map((b) => [b.le === Infinity ? 'Inf' : b.le, b.count]);
        return {{
          buckets: inf(buckets),
          p50: histogramQuantile(0.5, buckets),
          p90: histogramQuantile(0.9, buckets),
          p99: histogramQuantile(0.99, buckets),
          overflow: histogramQuantile(0.99, [{{ le: 0.1, count: 1 }}, {{ le: Infinity, count: 10 }}]),
          nothing: histogramQuantile(0.5, [{{ le: 0.1, count: 0 }}, {{ le: Infinity, count: 0 }}]),
          noInf: histogramQuantile(0.5, [{{ le: 0.1, count: 3 }}]),
          reading: readings.readingBetween(before, after, 2),
          first: readings.readingBetween(null, after, 0),
        }};
    """)
    # Both series' buckets are summed by bound: 30+20, 60+30, 70+30, 70+30.
    assert result["buckets"] == [[0.001, 50], [0.01, 90], [0.1, 100], ["Inf", 100]]
    assert abs(result["p50"] - 0.001) < 1e-12  # the 50th of 100 is the last under 1 ms
    assert abs(result["p90"] - 0.01) < 1e-12
    assert abs(result["p99"] - 0.091) < 1e-12  # 9 of the 10 between 10 and 100 ms
    assert result["overflow"] == 0.1 and result["nothing"] is None and result["noInf"] is None

    reading = result["reading"]
    assert reading["requests"] == {"rest": 15, "sse": 0, "realtime": 4, "auth": 0, "files": 0, "other": 3}
    assert reading["writes"] == {"writes": 21, "commits": 15}
    assert reading["problems"] == {"denials": 3, "errors": 5}
    assert abs(reading["latency"]["p99"] - 0.091) < 1e-12
    assert reading["connections"] == {"listens": 12, "realtime": 3}
    assert reading["memory"] == 123456789
    # The first scrape has gauges but no rates yet.
    first = result["first"]
    assert first["requests"] is None and first["writes"] is None and first["latency"] is None
    assert first["connections"] == {"listens": 12, "realtime": 3} and first["memory"] == 123456789


# MARK: - Live graphs

def test_the_graphs_show_request_write_and_denial_rates(browser, server, screenshot):
    open_console(browser, server, "server")
    wait_until(browser, lambda d: graph_points(d) >= 1, 10, "the graphs never got a reading")
    session = requests.Session()
    counter = iter(range(10**6))

    def busy_and_shown(driver):
        # Keep the server busy until a reading covers the work: each look makes an admin write
        # and a write the demo's rules refuse.
        index = next(counter)
        session.put(f"{server.url}/console-graphs/{index}.json", params={"auth": server.admin_token}, json=index,
                    timeout=10).raise_for_status()
        assert session.put(f"{server.url}/console-graphs/{index}.json", json=index, timeout=10).status_code == 401
        return all((graph_value(driver, graph, series) or 0) > 0
                   for graph, series in [("requests", "rest"), ("writes", "writes"), ("writes", "commits"),
                                         ("problems", "denials")])

    wait_until(browser, busy_and_shown, 20, "the graphs never showed REST requests, writes and denials")
    assert re.fullmatch(r"[\d.,]+/s", graph_text(browser, "requests", "rest"))
    assert re.fullmatch(r"[\d.,]+/s", graph_text(browser, "writes", "writes"))
    assert re.fullmatch(r"[\d.,]+ (ms|s)", graph_text(browser, "latency", "p50"))
    assert re.fullmatch(r"[\d.,]+ (ms|s)", graph_text(browser, "latency", "p99"))
    assert graph_value(browser, "latency", "p99") >= graph_value(browser, "latency", "p50") > 0
    assert re.fullmatch(r"[\d.]+ (MB|GB)", graph_text(browser, "memory", "memory"))
    assert re.fullmatch(r"\d[\d,]*", graph_text(browser, "connections", "listens"))
    # Each graph is named in words, and its lines are drawn.
    titles = [element.text for element in browser.find_elements(By.CSS_SELECTOR, f"{GRAPHS} .graph h3")]
    assert titles == ["Requests per second", "Writes per second", "HTTP request latency", "Open connections",
                      "Resident memory", "Rules denials and errors per second"]
    rest_line = browser.find_element(By.CSS_SELECTOR, "[data-testid=graph-requests] path.series-0")
    assert re.match(r"M[\d.]+,[\d.]+", rest_line.get_attribute("d"))
    wait_until(browser, lambda d: re.search(r"L[\d.]+,[\d.]+", rest_line.get_attribute("d")), 10,
               "two readings in a row were not joined by a line")
    # The figures above the graphs still come from /.hearth/stats.
    wait_until(browser, lambda d: re.fullmatch(r"[\d.,]+", d.find_element(By.CSS_SELECTOR, "[data-testid=figure-writes]").text),
               10, "no writes per second figure")
    screenshot(browser, "console-server-graphs")
    requests.delete(f"{server.url}/console-graphs.json", params={"auth": server.admin_token}, timeout=10).raise_for_status()
    no_page_errors(browser)


def test_the_page_fits_360_pixels_in_light_and_dark(browser, server, screenshot):
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 360, "height": 780, "deviceScaleFactor": 2, "mobile": True})
    open_console(browser, server, "server")
    wait_until(browser, lambda d: graph_points(d) >= 2, 10, "the graphs never got two readings")
    wait_for(browser, "[data-testid=problems]")

    def fits(driver):
        return driver.execute_script("""
            const width = window.innerWidth;
            const inside = [...document.querySelectorAll('.graph, .problems, .figure')]
              .every((element) => element.getBoundingClientRect().right <= width + 1);
            return inside && document.documentElement.scrollWidth <= width + 1;
        """)

    assert browser.execute_script("return window.innerWidth") == 360
    assert fits(browser), "something sticks out sideways at 360 px"
    screenshot(browser, "console-server-360-light")

    def colours(driver):
        return driver.execute_script("""
            const line = getComputedStyle(document.querySelector('[data-testid=graph-requests] path.series-0')).stroke;
            const card = getComputedStyle(document.querySelector('[data-testid=graph-requests]')).backgroundColor;
            return { line, card };
        """)

    light = colours(browser)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    wait_until(browser, lambda d: colours(d) != light, 5, "the graphs did not change with the dark theme")
    dark = colours(browser)
    assert dark["line"] != dark["card"] and light["line"] != light["card"]
    assert fits(browser), "something sticks out sideways at 360 px in the dark theme"
    screenshot(browser, "console-server-360-dark")
    no_page_errors(browser)


def test_polling_stops_when_the_page_is_hidden_or_left(browser, server):
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": _COUNT_METRICS_READS})
    open_console(browser, server, "server")
    wait_until(browser, lambda d: metrics_reads(d) >= 2, 10, "the page did not read /metrics again and again")
    interval = poll_ms(browser)

    # Hidden (another tab in front): no more reads.
    set_visibility(browser, "hidden")
    assert reads_over(browser, interval * 3) == 0

    # Shown again: a read at once, then reads again and again.
    shown_at = metrics_reads(browser)
    set_visibility(browser, "visible")
    wait_until(browser, lambda d: metrics_reads(d) >= shown_at + 2, 10, "reading did not resume when shown")

    # Left for another section: no more reads.
    browser.execute_script("location.hash = '#/data'")
    wait_for(browser, "[data-testid=data-tree]")
    assert not browser.find_elements(By.CSS_SELECTOR, GRAPHS)
    assert reads_over(browser, interval * 3) == 0
    no_page_errors(browser)


# MARK: - Recent problems

def test_recent_problems_show_an_error_the_server_logged(browser, server, screenshot):
    # A server of its own whose mail server refuses connections: asking for a password-reset
    # email makes it log an error (a real one, as an operator would see it).
    data = Path(tempfile.mkdtemp(prefix="hearth-problems-"))
    settings = data.parent / f"{data.name}-settings.json"
    settings.write_text(json.dumps({"auth": {"email": {"from": "Hearth <noreply@example.com>",
                                                       "smtp": {"host": "127.0.0.1", "port": free_port(), "security": "none"}}}}))
    own = launch_server(data, extra_args=("--settings", str(settings)))
    try:
        open_console(browser, own, "server")
        empty = wait_for(browser, "[data-testid=problems-empty]")
        assert "No warnings or errors" in empty.text
        assert not browser.find_elements(By.CSS_SELECTOR, "[data-testid=problem]")

        email = own.account("Ann")["email"]
        answer = requests.post(f"{own.url}/identitytoolkit.googleapis.com/v1/accounts:sendOobCode", params={"key": "hearth"},
                               json={"requestType": "PASSWORD_RESET", "email": email}, timeout=10)
        assert answer.status_code == 200  # the email is sent after the answer, which reveals nothing

        def problem_shown(driver):
            for item in driver.find_elements(By.CSS_SELECTOR, "[data-testid=problem]"):
                if item.find_element(By.CSS_SELECTOR, "[data-testid=problem-message]").text == "an email could not be sent":
                    return item
            return False

        item = wait_until(browser, problem_shown, 15, "the mail error never appeared")
        assert item.get_attribute("data-level") == "error"
        assert item.find_element(By.CSS_SELECTOR, "[data-testid=problem-level]").text == "Error"
        logged_at = item.find_element(By.CSS_SELECTOR, "[data-testid=problem-time]")
        assert re.search(r"\d{1,2}:\d{2}:\d{2}", logged_at.text) and logged_at.get_attribute("datetime")
        metadata = item.find_element(By.CSS_SELECTOR, "[data-testid=problem-metadata]").text
        assert "PASSWORD_RESET" in metadata and "cannot reach the mail server" in metadata
        assert email not in metadata  # the log never names the address
        assert not browser.find_element(By.CSS_SELECTOR, "[data-testid=problems-empty]").is_displayed()

        # The panel lists what the server keeps, newest first.
        logged = requests.get(f"{own.url}/.hearth/logs", headers=admin_headers(own), timeout=10).json()["entries"]
        wait_until(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-testid=problem]")) == len(logged), 10,
                   "the panel does not list every entry")
        shown = [element.text for element in browser.find_elements(By.CSS_SELECTOR, "[data-testid=problem-message]")]
        assert shown == [entry["message"] for entry in logged]
        assert browser.find_element(By.CSS_SELECTOR, "[data-testid=problems-count]").text == f"({len(logged)})"
        browser.execute_script("document.querySelector('[data-testid=problems]').scrollIntoView()")
        screenshot(browser, "console-server-problems")
        no_page_errors(browser)
    finally:
        stop_server(own)
        shutil.rmtree(data, ignore_errors=True)
        settings.unlink(missing_ok=True)
