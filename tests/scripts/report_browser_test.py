"""report.html in a real browser (Debian's headless Chromium): reports of four machines — 8 GPUs
through the fake NVML with watch sampling them, the article's box as a machine tree, this host
without a GPU, and an interrupted run — each opened, its DOM read back, a screenshot and an A4
PDF printed. No console error, no network request (the page's Content-Security-Policy forbids
them and the browser logs any attempt), every plot present and not empty (the GPUs' telemetry,
the training run's loss curve and step-time breakdown).

Usage: report_browser_test.py TRAINRIG_BINARY SOURCE_DIR"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

BINARY, SOURCE = sys.argv[1], sys.argv[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def validate(out_dir, *args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([BINARY, "validate", "--report", out_dir, *args], env=e,
                          capture_output=True, text=True, timeout=300)


def browser(*args):
    # --enable-logging=stderr: console messages and blocked requests reach stderr.
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                           "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=120)


class ReportInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            raise unittest.SkipTest("no chromium (scripts/install-deps.sh installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="report-browser-")
        fake = os.path.join(SOURCE, "tests/fixtures/nvml")
        cls.reports = {}
        # 8 GPUs: the fake NVML answers for watch while the host measures.
        d = os.path.join(cls.tmp, "hgx")
        validate(d, env={"TRAINRIG_FAKE_NVML": os.path.join(fake, "hgx-8xh100.json")})
        cls.reports["hgx"] = d
        d = os.path.join(cls.tmp, "article")
        validate(d, "--root", os.path.join(SOURCE, "tests/fixtures/machines/article-box"),
                 env={"TRAINRIG_FAKE_NVML": os.path.join(fake, "article-box.json")})
        cls.reports["article"] = d
        d = os.path.join(cls.tmp, "host")
        validate(d)
        cls.reports["host"] = d
        # Interrupted while doctor waits for a PyTorch probe that never answers.
        d = os.path.join(cls.tmp, "interrupted")
        bindir = os.path.join(cls.tmp, "bin")
        os.makedirs(bindir)
        with open(os.path.join(bindir, "python3"), "w") as f:
            f.write("#!/bin/sh\nexec sleep 60\n")
        os.chmod(os.path.join(bindir, "python3"), 0o755)
        env = dict(os.environ, PATH=bindir + ":" + os.environ.get("PATH", ""))
        p = subprocess.Popen([BINARY, "validate", "--timeout", "30", "--report", d], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        cls.reports["interrupted"] = d

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, name, plots):
        html = os.path.join(self.reports[name], "report.html")
        self.assertTrue(os.path.exists(html), f"{name}: no report.html")
        text = open(html, encoding="utf-8").read()
        self.assertIsNone(re.search(r"(src|href)\s*=\s*\"?(https?:)?//", text),
                          f"{name}: an external reference")
        dom = browser("--dump-dom", "file://" + html)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        for bad in ("Uncaught", "Refused to", "ERR_", "SyntaxError"):
            self.assertNotIn(bad, dom.stderr, f"{name}: console says {bad}")
        self.assertIn('id="verdict"', dom.stdout)
        for field in plots:
            m = re.search(r'data-field="%s".*?</svg>' % field, dom.stdout, re.S)
            self.assertIsNotNone(m, f"{name}: no {field} plot")
            points = re.findall(r'points="([^"]+)"', m.group(0))
            self.assertTrue(points and all(p.strip() for p in points), f"{name}: {field} empty")
        shot = os.path.join(self.tmp, name + ".png")
        pdf = os.path.join(self.tmp, name + ".pdf")
        browser("--screenshot=" + shot, "--window-size=1200,1600", "file://" + html)
        browser("--print-to-pdf=" + pdf, "--no-pdf-header-footer", "file://" + html)
        self.assertGreater(os.path.getsize(shot), 10000, f"{name}: screenshot")
        with open(pdf, "rb") as f:
            self.assertEqual(f.read(5), b"%PDF-", f"{name}: PDF")
        return dom.stdout

    def test_eight_gpus_with_telemetry(self):
        dom = self.check("hgx", ["temperature_celsius", "sm_clock_hertz", "power_watts",
                                 "utilization"])
        # 4 plots of 8 GPUs, and the loss curve when the training run took place
        self.assertEqual(dom.count("<polyline"), 4 * 8 + dom.count('data-field="loss"'))

    def test_article_box_tree(self):
        dom = self.check("article", [])
        self.assertIn("machine tree: configuration only", dom)
        self.assertIn('id="topology"', dom)

    def test_host_without_gpu(self):
        dom = self.check("host", ["loss"])  # the CPU training run: its loss curve
        self.assertIn("no GPU: host checks only", dom)
        self.assertIn('id="bench"', dom)
        m = re.search(r'data-field="step-phases".*?</svg>', dom, re.S)
        self.assertIsNotNone(m, "no step-time breakdown")
        self.assertGreater(len(re.findall(r"<rect ", m.group(0))), 4, "step-time bars empty")

    def test_interrupted_run(self):
        dom = self.check("interrupted", [])
        self.assertIn("INCOMPLETE", dom)
        doc = json.load(open(os.path.join(self.reports["interrupted"], "report.json")))
        self.assertTrue(doc["incomplete"])


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
