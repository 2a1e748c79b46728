#!/usr/bin/env python3
"""The viewer page in a real browser (Debian's chromium, headless, software WebGL).

Writes the page of a short run of a looped bundled model (the four-bar of paper 001) with a visual
of every kind added to one link (an STL mesh among them, so that three.js's STLLoader runs), opens
it at two times, and checks:
  * the page reports no script error (body data-status "ok", set after the first frame is drawn;
    any error sets "error: ...");
  * the two screenshots differ around the markers, at the pixels where the CSV's own marker
    columns (the simulator's output, not the page's data) fall through the page's camera;
  * two screenshots at the same time are identical, so the comparison above can fail.
Standard library only: PNGs are decoded here (zlib and the PNG row filters).

usage: viewer_browser.py LOOPDYN_CLI MODELS_DIR WORK_DIR
       viewer_browser.py --time-to-ok PAGE.html [T]   seconds from navigation until the page has
                                                      drawn time T (default 5), paused, status ok
                                                      (the timing docs/viewer.md gives)
"""
import base64
import json
import math
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

WINDOW = (640, 600)
T1 = 0.5  # a row of the run (output every 0.01 s): the CSV's markers at T1 are read, not interpolated


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def binary_stl(path):
    """One triangle of 5 cm, binary STL (80-byte header, count, 50 bytes per facet)."""
    facet = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 0.05, 0, 0, 0, 0.05, 0, 0)
    with open(path, "wb") as f:
        f.write(b"loopdyn viewer test".ljust(80, b" ") + struct.pack("<I", 1) + facet)


VISUALS = """    visuals:
      - {shape: box, size: [0.3, 0.2, 0.1], origin: {xyz: [1.0, 0, 0]}, rgba: [0.9, 0.2, 0.2, 1]}
      - {shape: sphere, radius: 0.15, origin: {xyz: [2.0, 0, 0]}}
      - {shape: cylinder, radius: 0.05, length: 2.0, origin: {xyz: [1.0, 0, 0], rpy: [0, 1.5707963267948966, 0]}}
      - {shape: capsule, radius: 0.08, length: 0.5, origin: {xyz: [0.5, 0, 0]}}
      - {shape: mesh, file: part.stl, scale: [2, 2, 2]}
      - {shape: mesh, file: part.obj}
"""


def model_with_visuals(models, work):
    """fourbar_park_regular.yaml with VISUALS on its connecting link (link2), beside part.stl."""
    with open(os.path.join(models, "fourbar_park_regular.yaml")) as f:
        text = f.read()
    anchor = "    inertia: [10.0, 10.0, 20.0]   # Izz = J2\n"
    if anchor not in text:
        fail("fourbar_park_regular.yaml changed: link2's inertia line not found")
    binary_stl(os.path.join(work, "part.stl"))
    path = os.path.join(work, "fourbar_visuals.yaml")
    with open(path, "w") as f:
        f.write(text.replace(anchor, anchor + VISUALS))
    return path


class Browser:
    """Headless chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: the
    browser reads commands on its fd 3 and answers on fd 4, JSON messages ended by NUL), so that a
    screenshot and the page's state come from the same page at the same moment (--dump-dom and
    --screenshot lay the page out at two different window heights)."""

    def __init__(self, chromium, profile):
        to_browser, self.commands = os.pipe()
        self.answers, from_browser = os.pipe()

        def child_fds():  # the protocol's fds 3 and 4 in the browser (dup first: no clobbering)
            read, write = os.dup(to_browser), os.dup(from_browser)
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--user-data-dir=" + profile, "--use-angle=swiftshader",
             "--enable-unsafe-swiftshader", "--hide-scrollbars", "--remote-debugging-pipe", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_browser)
        os.close(from_browser)
        self.next_id, self.buffer, self.session = 0, b"", None

    def call(self, method, params=None, timeout=60):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:  # events and other answers are skipped
            while b"\0" not in self.buffer:
                if not select.select([self.answers], [], [], max(0.0, deadline - time.monotonic()))[0]:
                    fail("chromium did not answer %s within %d s" % (method, timeout))
                chunk = os.read(self.answers, 1 << 20)
                if not chunk:
                    fail("chromium closed the protocol pipe during " + method)
                self.buffer += chunk
            text, self.buffer = self.buffer.split(b"\0", 1)
            answer = json.loads(text)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    fail("%s: %s" % (method, answer["error"]))
                return answer["result"]

    def open(self, url, width, height):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": url})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in result:
            fail("%s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def close(self):
        self.session = None
        try:
            self.call("Browser.close", timeout=10)
        finally:
            self.process.wait(timeout=30)


def show_time(browser, t):
    """Sets the page's hash to t (paused), waits until it has drawn t; (its data-* values, PNG)."""
    browser.evaluate("location.hash = 't=%s&paused'" % t)
    deadline = time.monotonic() + 60
    while True:
        data = browser.evaluate("Object.assign({}, document.body ? document.body.dataset : {})")
        status = data.get("status", "loading")
        if status.startswith("error") or (status == "ok" and float(data["time"]) == float(t)):
            break
        if time.monotonic() > deadline:
            fail("the page did not draw t = %s within 60 s: %r" % (t, data))
        time.sleep(0.05)
    if status != "ok":
        fail("page at t = %s: status %r" % (t, status))
    # Two more frames: the canvas on screen is one drawn at t.
    browser.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))")
    return data, base64.b64decode(browser.call("Page.captureScreenshot", {"format": "png"})["data"])


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def read_png(data):
    """(width, height, channels, pixel bytes) of an 8-bit RGB or RGBA PNG."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", chunk[:10])
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    if depth != 8 or colour not in (2, 6):
        fail("screenshot of bit depth %d, colour type %d: not decoded here" % (depth, colour))
    n = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(idat), width * n
    out, prev = bytearray(), bytearray(stride)
    for y in range(height):
        kind, row = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # the five PNG filters, byte by byte
            left = row[i - n] if i >= n else 0
            if kind == 1:
                row[i] = (row[i] + left) & 255
            elif kind == 2:
                row[i] = (row[i] + prev[i]) & 255
            elif kind == 3:
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 255
            elif kind == 4:
                row[i] = (row[i] + paeth(left, prev[i], prev[i - n] if i >= n else 0)) & 255
        out += row
        prev = row
    return width, height, n, bytes(out)


def differing_pixels(a, b, box):
    """Pixels of box (x0, y0, x1, y1) whose colour differs between images a and b."""
    w, h, n, pa = a
    _, _, _, pb = b
    x0, y0, x1, y1 = max(0, box[0]), max(0, box[1]), min(w, box[2]), min(h, box[3])
    count = 0
    for y in range(y0, y1):
        row = y * w * n
        for x in range(x0, x1):
            if pa[row + x * n:row + x * n + 3] != pb[row + x * n:row + x * n + 3]:
                count += 1
    return count


def marker_positions(csv_path, t):
    """{marker: (x, y, z)} of the CSV row at time t (the simulator's marker columns)."""
    with open(csv_path) as f:
        header = f.readline().strip().split(",")
        rows = [list(map(float, line.split(","))) for line in f if line.strip() and not line.startswith("#")]
    row = min(rows, key=lambda r: abs(r[header.index("t")] - t))
    if abs(row[header.index("t")] - t) > 1e-12:
        fail("no row at t = %g in %s" % (t, csv_path))
    names = [c[:-2] for c in header if c.endswith(".x") and c[:-2] + ".y" in header and c[:2] not in ("q.", "u.")]
    return {m: tuple(row[header.index(m + "." + a)] for a in "xyz") for m in names}


def to_pixel(point, camera, viewport):
    """Screen pixel of a world point: clip = M [p; 1] (column-major M), then the viewport."""
    clip = [sum(camera[4 * c + r] * v for c, v in enumerate(list(point) + [1.0])) for r in range(4)]
    x, y = clip[0] / clip[3], clip[1] / clip[3]
    return (viewport[0] + (x + 1) / 2 * viewport[2], viewport[1] + (1 - y) / 2 * viewport[3])


def time_to_ok(page, t):
    """Seconds from navigation of `page` at #t=T&paused until it reports status ok at t."""
    chromium = shutil.which("chromium") or fail("chromium not found")
    profile = tempfile.mkdtemp(prefix="loopdyn_profile_")
    browser = Browser(chromium, profile)
    try:
        start = time.monotonic()
        browser.open("file://%s#t=%s&paused" % (os.path.abspath(page), t), *WINDOW)
        show_time(browser, t)
        return time.monotonic() - start
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


def main():
    if len(sys.argv) in (3, 4) and sys.argv[1] == "--time-to-ok":
        t = sys.argv[3] if len(sys.argv) == 4 else "5"
        print("status ok at t = %s after %.1f s" % (t, time_to_ok(sys.argv[2], t)))
        return
    if len(sys.argv) != 4:
        fail(__doc__)
    cli, models, work = sys.argv[1:]
    chromium = shutil.which("chromium")
    if not chromium:
        fail("chromium not found: `bash scripts/install-deps.sh --test` installs it (scripts/test.sh does)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = model_with_visuals(models, work)
    csv = os.path.join(work, "run.csv")
    sim = subprocess.run([cli, "simulate", model, "--t-end", "1", "--out", csv, "--view"], capture_output=True, text=True)
    if sim.returncode != 0:
        fail("simulate --view: " + sim.stdout + sim.stderr)
    page = os.path.join(work, "run.html")

    # t = 0, T1, then 0 again: the page must come back to the same pixels.
    profile = tempfile.mkdtemp(prefix="profile_", dir=work)  # a throwaway profile
    browser = Browser(chromium, profile)
    try:
        browser.open("file://%s#t=0&paused" % page, *WINDOW)
        shots = [show_time(browser, t) for t in ("0", str(T1), "0")]
        notes = browser.evaluate("document.getElementById('notes').textContent")
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    for k, (_, png) in enumerate(shots):
        with open(os.path.join(work, "shot%d.png" % k), "wb") as f:  # kept for a look when the test fails
            f.write(png)
    if "'part.obj' is not STL" not in notes:
        fail("the page does not show the note on the .obj mesh: %r" % notes)
    data = [d for d, _ in shots]
    a, b, again = (read_png(png) for _, png in shots)
    w, h = a[0], a[1]
    if (w, h) != WINDOW:
        fail("screenshot of %dx%d, window %dx%d" % (w, h, WINDOW[0], WINDOW[1]))

    # Same time, same pixels: the comparison below can fail.
    same = differing_pixels(a, again, (0, 0, w, h))
    if same:
        fail("two screenshots at t = 0 differ in %d pixels" % same)

    # The markers of the CSV through the page's camera (the same at both times: paused, not moved).
    camera, viewport = json.loads(data[0]["camera"]), json.loads(data[0]["viewport"])
    if json.loads(data[1]["camera"]) != camera:
        fail("the camera moved between the two times")
    start, later = marker_positions(csv, 0.0), marker_positions(csv, T1)
    pixels = {m: (to_pixel(start[m], camera, viewport), to_pixel(later[m], camera, viewport)) for m in start}
    moved = max(pixels, key=lambda m: math.dist(*pixels[m]))
    travel = math.dist(*pixels[moved])
    if travel < 20:
        fail("marker %s moves %.1f px on screen between t = 0 and %g: too little to test" % (moved, travel, T1))
    # Around both places of the marker (its dot is drawn on top of everything) the pixels change.
    for when, (x, y) in zip(("0", str(T1)), pixels[moved]):
        changed = differing_pixels(a, b, (int(x) - 4, int(y) - 4, int(x) + 5, int(y) + 5))
        if changed < 10:
            fail("marker %s: only %d of 81 pixels around its place at t = %s (%.0f, %.0f) changed" % (moved, changed, when, x, y))
    view = (int(viewport[0]), int(viewport[1]), int(viewport[0] + viewport[2]), int(viewport[1] + viewport[3]))
    print("ok: status ok at three times; marker %s moved %.0f px; %d pixels of the 3D view changed; "
          "same time again: 0 changed" % (moved, travel, differing_pixels(a, b, view)))


if __name__ == "__main__":
    main()
