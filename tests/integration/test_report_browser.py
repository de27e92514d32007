"""report.html in a real headless Chromium.

Chromium is driven over the DevTools protocol through `--remote-debugging-pipe` (fd 3:
commands in, fd 4: replies out, NUL-terminated JSON), so no TCP port, no chromedriver and
no extra Python package is needed. The page is opened from disk (file://); the test checks
that every profile is on the page, every plot has a non-zero size, nothing was fetched from
the network and nothing was logged as an error, and saves a full-page screenshot to
tests/artifacts/.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from govkit.report.run import write_report

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
DATA = Path(__file__).parent.parent / "data" / "report"
ARTIFACTS = Path(__file__).parent.parent / "artifacts"
WIDTH = 1280


class DevToolsError(RuntimeError):
    pass


class Chromium:
    """A headless Chromium with one page, spoken to over the DevTools pipe."""

    def __init__(self, profile_dir: Path):
        to_child = [_high_fd(fd) for fd in os.pipe()]      # (read: child's fd 3, write)
        from_child = [_high_fd(fd) for fd in os.pipe()]    # (read, write: child's fd 4)
        flags = [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-extensions", "--disable-default-apps", "--mute-audio",
            "--hide-scrollbars", f"--window-size={WIDTH},900", f"--user-data-dir={profile_dir}",
            "--remote-debugging-pipe", "about:blank",
        ]
        # bash (dash only knows fds 0-9) moves the pipe ends to fds 3 and 4 for Chromium.
        script = (f'exec "$0" "$@" 3<&{to_child[0]} 4>&{from_child[1]} '
                  f"{to_child[0]}<&- {from_child[1]}>&-")
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, str(CHROMIUM), *flags],
            pass_fds=(to_child[0], from_child[1]), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(to_child[0])
        os.close(from_child[1])
        self._out, self._in = to_child[1], from_child[0]
        self._buf = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    # -- protocol
    def call(self, method: str, params: dict | None = None, *, page: bool = True,
             timeout: float = 10.0) -> dict:
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params or {}}
        if page and self.session:
            msg["sessionId"] = self.session
        os.write(self._out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline, f"reply to {method}")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise DevToolsError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, name: str, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for e in self.events:
                if e["method"] == name:
                    return e
            msg = self._read(deadline, f"event {name}")
            if "method" in msg:
                self.events.append(msg)

    def _read(self, deadline: float, what: str) -> dict:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise DevToolsError(f"timed out waiting for {what}")
            chunk = os.read(self._in, 1 << 16)
            if not chunk:
                raise DevToolsError(f"Chromium exited while waiting for {what}")
            self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)

    # -- page helpers
    def open_page(self) -> None:
        target = self.call("Target.createTarget", {"url": "about:blank"}, page=False,
                           timeout=20)  # the first call also waits for start-up
        self.session = self.call("Target.attachToTarget",
                                 {"targetId": target["targetId"], "flatten": True},
                                 page=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": WIDTH, "height": 900, "deviceScaleFactor": 1, "mobile": False})

    def navigate(self, url: str) -> None:
        self.events.clear()
        nav = self.call("Page.navigate", {"url": url})
        if nav.get("errorText"):
            raise DevToolsError(f"navigating to {url}: {nav['errorText']}")
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str):
        res = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True})
        if "exceptionDetails" in res:
            raise DevToolsError(f"JS failed: {res['exceptionDetails']}")
        return res["result"].get("value")

    def screenshot(self, path: Path) -> None:
        metrics = self.call("Page.getLayoutMetrics")
        height = int(metrics["cssContentSize"]["height"]) + 1
        shot = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}},
            timeout=20)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(shot["data"]))

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries since navigation."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error",
                                                                               "assert"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                  for a in p.get("args", [])))
            elif e["method"] == "Runtime.exceptionThrown":
                out.append("exception: " + json.dumps(p.get("exceptionDetails", {}))[:300])
            elif e["method"] == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append(f"log: {p['entry'].get('text')} {p['entry'].get('url', '')}")
        return out

    def requested_urls(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events
                if e["method"] == "Network.requestWillBeSent"]

    def close(self) -> None:
        try:
            self.call("Browser.close", page=False, timeout=5)
        except (DevToolsError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)   # our own process group only
            self.proc.wait(timeout=5)
        finally:
            os.close(self._out)
            os.close(self._in)


def _high_fd(fd: int) -> int:
    """Move a pipe end above 9 so the shell's 3<&N 4>&M can never clobber it."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


# Tables that need horizontal scrolling, and the page's width: the same check on every page.
LAYOUT_FACTS = """scrolled: [...document.querySelectorAll('.scroll')]
            .filter(d => d.scrollWidth > d.clientWidth + 1)
            .map(d => d.querySelector('table').id || d.querySelector('table').className),
          pageWidth: document.documentElement.scrollWidth"""

PAGE_FACTS = """(() => {
  const plots = [...document.querySelectorAll('svg.plot')].map(svg => {
    const r = svg.getBoundingClientRect();
    const b = svg.getBBox();
    return {id: svg.closest('figure').id, width: r.width, height: r.height,
            bboxWidth: b.width, bboxHeight: b.height,
            paths: svg.querySelectorAll('path').length,
            whiskers: svg.querySelectorAll('g[id*="-whiskers-"] path').length,
            text: [...svg.querySelectorAll('text')].map(t => t.textContent).join(' ')};
  });
  const flags = [...document.querySelectorAll('#headline-table a.flag')]
    .map(a => ({title: a.title, target: !!document.getElementById(a.hash.slice(1))}));
  return {title: document.title, text: document.body.innerText, plots, flags,
          scripts: document.scripts.length,
          """ + LAYOUT_FACTS + """};
})()"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium) - browser test skipped")
    chromium = Chromium(tmp_path_factory.mktemp("chromium-profile"))
    try:
        chromium.open_page()
        yield chromium
    finally:
        chromium.close()


def _report(tmp_path: Path, fixture: str) -> tuple[Path, dict]:
    shutil.copy(DATA / fixture / "results.json", tmp_path / "results.json")
    html, _ = write_report(tmp_path)
    return html, json.loads((tmp_path / "results.json").read_text())


def assert_clean_page(browser, facts: dict, shot: Path) -> None:
    """What every report page must be: no horizontal overflow or scrolled table at desktop
    width, no script, no console error, nothing fetched from the network, a screenshot."""
    assert facts["pageWidth"] <= WIDTH, "page overflows horizontally"
    assert facts["scrolled"] == [], "tables need horizontal scrolling at desktop width"
    assert facts["scripts"] == 0
    assert browser.errors() == []
    assert all(u.startswith(("file:", "data:", "about:")) for u in browser.requested_urls()), \
        browser.requested_urls()
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 20_000


@pytest.mark.parametrize(("fixture", "plots", "shot"), [
    ("full", ["fig-latency", "fig-overhead"], "report.png"),
    ("throughput", ["fig-latency", "fig-overhead", "fig-throughput"], "report-throughput.png"),
    ("no_baseline", ["fig-latency", "fig-overhead"], "report-no-baseline.png"),
])
def test_report_renders_in_chromium(browser, tmp_path, fixture, plots, shot):
    html, doc = _report(tmp_path, fixture)
    browser.navigate(html.as_uri())
    facts = browser.evaluate(PAGE_FACTS)
    browser.screenshot(ARTIFACTS / shot)

    for p in doc["profiles"]:
        assert p["name"] in facts["text"], f"profile {p['name']} not visible on the page"
    assert ("repeats failed" in facts["text"]) == any(r["status"] != "ok"
                                                      for r in doc["results"])
    assert [p["id"] for p in facts["plots"]] == plots
    for p in facts["plots"]:
        assert p["width"] > 300 and p["height"] > 150, p
        assert p["bboxWidth"] > 0 and p["bboxHeight"] > 0, p
        assert p["paths"] > 10, p
        # every plot but the overhead one without a baseline has interval whiskers
        assert p["whiskers"] > 0 or (p["id"] == "fig-overhead" and fixture == "no_baseline"), p
    # each flag marker explains itself on hover and leads to its entry in the Flags list
    assert facts["flags"] and all(f["title"] and f["target"] for f in facts["flags"])
    latency = facts["plots"][0]["text"]
    for p in doc["profiles"]:
        assert p["name"] in latency, f"{p['name']} missing from the latency plot's legend"
    assert_clean_page(browser, facts, ARTIFACTS / shot)


def test_console_errors_are_detected(browser, tmp_path):
    """The console check above is meaningful: a page that logs an error is caught."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><title>x</title><script>console.error('boom')</script>")
    browser.navigate(page.as_uri())
    assert any("boom" in e for e in browser.errors())


COMPARE = Path(__file__).parent.parent / "data" / "compare"

COMPARE_FACTS = """(() => {
  const svg = document.querySelector('svg.plot');
  const r = svg.getBoundingClientRect();
  const flags = [...document.querySelectorAll('#compare-table a.flag')]
    .map(a => ({title: a.title, target: !!document.getElementById(a.hash.slice(1))}));
  return {text: document.body.innerText, figure: svg.closest('figure').id,
          width: r.width, height: r.height, bboxWidth: svg.getBBox().width,
          whiskers: svg.querySelectorAll('g[id*="-whiskers-"] path').length,
          plotText: [...svg.querySelectorAll('text')].map(t => t.textContent).join(' '),
          flags, scripts: document.scripts.length,
          """ + LAYOUT_FACTS + """};
})()"""


def test_compare_renders_in_chromium(browser, tmp_path):
    """`govkit report A B`: the comparison page of a ddsperf and a Fast DDS run."""
    from govkit.report.compare import write_reports
    runs = []
    for name in ("ddsperf", "fastdds"):
        (tmp_path / name).mkdir()
        shutil.copy(COMPARE / name / "results.json", tmp_path / name / "results.json")
        runs.append(tmp_path / name)
    html, _, _ = write_reports(runs)
    browser.navigate(html.as_uri())
    facts = browser.evaluate(COMPARE_FACTS)
    browser.screenshot(ARTIFACTS / "compare.png")

    for label in ("ddsperf · Cyclone DDS", "fastdds · Fast DDS", "RTI Connext, published"):
        assert label in facts["text"]
    for name in ("none", "rtps_sign", "rtps_encrypt"):
        assert name in facts["text"]
    assert facts["figure"] == "fig-compare"
    assert facts["width"] > 300 and facts["height"] > 150 and facts["bboxWidth"] > 0
    assert facts["whiskers"] > 0
    for word in ("rtps_sign", "rtps_encrypt", "Cyclone DDS", "Fast DDS", "RTI Connext"):
        assert word in facts["plotText"], word
    assert facts["flags"] and all(f["title"] and f["target"] for f in facts["flags"])
    assert_clean_page(browser, facts, ARTIFACTS / "compare.png")


WIRE_FACTS = """(() => {
  const rows = [...document.querySelectorAll('#wire-table tbody tr')]
    .map(r => ({profile: r.dataset.profile, verdict: r.dataset.verdict,
                text: r.innerText}));
  const seen = [...document.querySelectorAll('#governance-table td[data-wire]')]
    .map(td => ({profile: td.closest('tr').dataset.profile, wire: td.dataset.wire,
                 text: td.innerText}));
  const alert = document.getElementById('wire-alert');
  return {rows, seen, alert: alert ? alert.innerText : null,
          count: document.getElementById('wire-count').innerText,
          reasons: [...document.querySelectorAll('#wire-reasons li')].map(li => li.innerText),
          """ + LAYOUT_FACTS + """};
})()"""


def test_wire_section_in_chromium(browser, tmp_path):
    """`bench --wire`: each profile's row says what was seen on the wire, and the per-point
    table shows the counts (recorded run: all seven match)."""
    html, doc = _report(tmp_path, "wire")
    browser.navigate(html.as_uri())
    facts = browser.evaluate(WIRE_FACTS)
    browser.screenshot(ARTIFACTS / "report-wire.png")
    names = [p["name"] for p in doc["profiles"]]
    assert sorted(r["profile"] for r in facts["rows"]) == sorted(names)
    assert {r["verdict"] for r in facts["rows"]} == {"match"}
    assert {s["profile"]: s["wire"] for s in facts["seen"]} == dict.fromkeys(names, "match")
    encrypt = next(s for s in facts["seen"] if s["profile"] == "rtps_encrypt")["text"]
    assert encrypt.startswith("✓ matches") and "RTPS GCM 100%" in encrypt
    assert "readable payload in 0 of" in encrypt
    assert facts["alert"] is None and facts["reasons"] == []
    assert facts["count"].startswith("7 of 7")
    assert facts["pageWidth"] <= WIDTH and facts["scrolled"] == []
    assert browser.errors() == []


def test_wire_mismatch_is_judged_again_from_the_counts(browser, tmp_path):
    """A stored "match" whose counts show readable payload under rtps_encrypt: the report
    judges the counts, raises the alert, names the broken check and says the stored verdict
    differed."""
    doc = json.loads((DATA / "wire" / "results.json").read_text())
    point = next(p for p in doc["wire"]["points"] if p["profile"] == "rtps_encrypt")
    user = point["observed"]["user"]
    n = user["messages"]
    user.update(rtps={"none": n}, readable=n, payload={"plain": n}, submessage={"none": n})
    assert point["verdict"] == "match"          # what results.json (wrongly) says
    (tmp_path / "results.json").write_text(json.dumps(doc))
    html, _ = write_report(tmp_path)
    browser.navigate(html.as_uri())
    facts = browser.evaluate(WIRE_FACTS)
    row = next(r for r in facts["rows"] if r["profile"] == "rtps_encrypt")
    assert row["verdict"] == "mismatch"
    assert "MISMATCH" in row["text"] and "stored another verdict" in row["text"]
    assert "none 100% (want GCM)" in row["text"]
    assert {s["profile"]: s["wire"] for s in facts["seen"]}["rtps_encrypt"] == "mismatch"
    assert facts["alert"] and "rtps_encrypt" in facts["alert"]
    assert facts["count"].startswith("6 of 7")
    assert any(r.startswith("rtps_encrypt latency 1024 B: rtps protection: expected GCM")
               for r in facts["reasons"]), facts["reasons"]
    assert any("readable payload" in r for r in facts["reasons"])
    assert browser.errors() == []
