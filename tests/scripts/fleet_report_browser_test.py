"""fleet-report.html in a real browser (Debian's headless Chromium), for a synthetic fleet of 1,000
nodes: one live validate report of this machine copied 1,000 times with every measurement moved
within +-1 %, eight GPUs' GEMM and HBM figures added to each, a node-pair file, and faults
planted (a GPU 6 % slow, a node on another NCCL, a node whose own verdict is NOT READY, a
truncated report, a node slow with every pair partner). `fleet judge --pairs --out` writes the
report; the page must load without a console error or a request, its filter box must find a
node (and open the folded list that holds it), the page must stay short, and without script
every node's name must still be on it.

Usage: fleet_report_browser_test.py TRAINRIG_BINARY SOURCE_DIR
       fleet_report_browser_test.py TRAINRIG_BINARY --generate DIR [NODES]
           (the fleet alone, for bench/results/2026-12-03-fleet-judge.md)"""
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_browser_test import CHROMIUM, browser  # noqa: E402 (the same Chromium, run alike)

BINARY = sys.argv[1]
NODES = 1000
SLOW_GPU, OTHER_NCCL, NOT_READY, TRUNCATED, BAD_PAIRS = 500, 7, 42, 123, 777


def name(i):
    return "node%04d" % i


def gpu_record(template, bench, metric, unit, gpu, value):
    r = json.loads(json.dumps(template))
    r.update(bench=bench, name=metric, unit=unit, target={"gpu": gpu}, params={"size": "quick"},
             expected=None, ratio=None, status="info", samples=[value] * 3, median=value,
             min=value, max=value, cv=0.0)
    return r


def generate(out, nodes=NODES):
    """A fleet of `nodes` report directories under out/nodes, and out/pairs.json."""
    template = os.path.join(out, "template")
    subprocess.run([BINARY, "validate", "--report", template], capture_output=True, timeout=300)
    with open(os.path.join(template, "report.json")) as f:
        doc = json.load(f)
    snapshot = os.path.join(template, "raw", "snapshot.json")
    rng = random.Random(1)
    base = os.path.join(out, "nodes")
    for i in range(nodes):
        d = json.loads(json.dumps(doc))
        d["host"] = name(i)
        d["verdict"] = "READY"
        d["items"] = []
        results = d["bench"]["results"]
        for r in results:
            r["median"] *= 1 + 0.01 * (2 * rng.random() - 1)
            r["samples"] = [r["median"]] * len(r["samples"])
        for g in range(8):
            gemm = 7.0e14 * (1 + 0.01 * (2 * rng.random() - 1))
            if i == SLOW_GPU and g == 3:
                gemm *= 0.94
            results.append(gpu_record(results[0], "gemm", "bf16", "FLOP/s", g, gemm))
            results.append(gpu_record(results[0], "hbm", "copy", "bytes/s", g,
                                      2.9e12 * (1 + 0.01 * (2 * rng.random() - 1))))
        if i == OTHER_NCCL:
            d["versions"]["nccl"] = "2.18.3"
        if i == NOT_READY:
            d["verdict"] = "NOT READY"
            d["items"] = [{"id": "gpu.pcie-link", "level": "fail"}]
        node_dir = os.path.join(base, name(i))
        os.makedirs(os.path.join(node_dir, "raw"))
        text = json.dumps(d)
        with open(os.path.join(node_dir, "report.json"), "w") as f:
            f.write(text[:len(text) // 2] if i == TRUNCATED else text)
        shutil.copy(snapshot, os.path.join(node_dir, "raw", "snapshot.json"))
    # Each node with its neighbour in a ring, and as many pairs again at random: every node has
    # two partners or more. Every pair of BAD_PAIRS runs at a quarter of the speed.
    pairs, seen = [], set()
    while len(pairs) < 2 * nodes:
        a, b = (len(pairs), (len(pairs) + 1) % nodes) if len(pairs) < nodes else \
            rng.sample(range(nodes), 2)
        a, b = min(a, b), max(a, b)
        if (a, b) in seen:
            continue
        seen.add((a, b))
        slow = BAD_PAIRS in (a, b)
        pairs.append({"nodes": [name(a), name(b)],
                      "value": (1e10 if slow else 4e10) * (1 + 0.01 * (2 * rng.random() - 1))})
    with open(os.path.join(out, "pairs.json"), "w") as f:
        json.dump({"schema": "trainrig.fleet.pairs", "schema_version": 1,
                   "measurement": "nccl all-reduce busbw", "unit": "bytes/s", "pairs": pairs}, f)
    return base, os.path.join(out, "pairs.json")


# Appended to a copy of the page: types into the filter as a person would, and leaves what it saw
# in the DOM for --dump-dom to print.
PROBE = """<script>
var out = {}, box = document.getElementById('filter');
out.full = document.documentElement.scrollHeight;
out.boxShown = !box.hidden;
box.value = '%s';
box.dispatchEvent(new Event('input'));
out.matches = document.getElementById('matches').textContent;
out.rows = Array.prototype.filter.call(document.querySelectorAll('tr.node'), function (e) {
  return e.offsetParent !== null; }).map(function (e) { return e.querySelector('code').textContent; });
out.filtered = document.documentElement.scrollHeight;
box.value = '';
box.dispatchEvent(new Event('input'));
out.cleared = document.documentElement.scrollHeight;
document.body.setAttribute('data-probe', JSON.stringify(out));
</script>"""


class FleetReportInBrowser(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not CHROMIUM:
            raise unittest.SkipTest("no chromium (scripts/install-deps.sh installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="fleet-browser-")
        nodes, pairs = generate(cls.tmp)
        cls.report = os.path.join(cls.tmp, "report")
        # CPU time, not wall time: a budget that a busy machine cannot break by itself.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        cls.judged = subprocess.run([BINARY, "fleet", "judge", nodes, "--pairs", pairs, "--out",
                                  cls.report], capture_output=True, text=True, timeout=120)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cls.seconds = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        cls.html = os.path.join(cls.report, "fleet-report.html")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def probe(self, query):
        with open(self.html, encoding="utf-8") as f:
            page = f.read()
        copy = os.path.join(self.tmp, "probe.html")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(page.replace("</body>", PROBE % query + "</body>"))
        dom = browser("--window-size=1200,900", "--dump-dom", "file://" + copy)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        m = re.search(r"data-probe=\"([^\"]*)\"", dom.stdout)
        self.assertIsNotNone(m, "the probe did not run: " + dom.stderr[-2000:])
        return json.loads(m.group(1).replace("&quot;", '"'))

    def test_judged_and_written(self):
        # 2: the truncated report's node could not be judged, which wins over the drain list.
        self.assertEqual(self.judged.returncode, 2, self.judged.stderr)
        self.assertLess(self.seconds, 10, "fleet judge --out of 1,000 nodes (CPU seconds)")
        self.assertIn("FLEET: 995 READY, 3 to drain, 1 drifted, 1 unknown (1000 nodes)",
                      self.judged.stdout)
        with open(os.path.join(self.report, "fleet-report.json")) as f:
            doc = json.load(f)
        drained = {d["name"]: d["scheduler_reason"] for d in doc["drain"]}
        self.assertEqual(sorted(drained), [name(NOT_READY), name(SLOW_GPU), name(BAD_PAIRS)])
        self.assertEqual(drained[name(SLOW_GPU)], "trainrig:outlier.gemm.bf16 GPU 3")
        self.assertEqual(drained[name(NOT_READY)], "trainrig:gpu.pcie-link")
        self.assertTrue(drained[name(BAD_PAIRS)].startswith("trainrig:pair.nccl.all-reduce.busbw"))
        self.assertLess(os.path.getsize(self.html), 1 << 20)

    def test_loads_without_errors_or_requests(self):
        with open(self.html, encoding="utf-8") as f:
            text = f.read()
        self.assertIsNone(re.search(r"(src|href)\s*=\s*\"?(https?:)?//", text))
        dom = browser("--dump-dom", "file://" + self.html)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        for bad in ("Uncaught", "Refused to", "Content Security Policy", "ERR_", "SyntaxError"):
            self.assertNotIn(bad, dom.stderr, f"console says {bad}")
        self.assertIn('id="verdict"', dom.stdout)
        with open(os.path.join(self.report, "fleet-report.json")) as f:
            judged = [m for m in json.load(f)["measurements"] if m["judged"]]
        # A plot per measurement, and the pairs' distribution.
        self.assertEqual(dom.stdout.count('<div class="plot f"'), 1 + len(judged))
        shot = os.path.join(self.tmp, "fleet.png")
        browser("--screenshot=" + shot, "--window-size=1200,1600", "file://" + self.html)
        self.assertGreater(os.path.getsize(shot), 10000, "screenshot")

    def test_filter_finds_a_ready_node_and_the_page_stays_short(self):
        seen = self.probe("node0612")
        print("page height (px):", seen, file=sys.stderr)
        self.assertTrue(seen["boxShown"])
        self.assertEqual(seen["matches"], "1 node match")
        self.assertEqual(seen["rows"], ["node0612"])  # its folded READY list was opened
        self.assertLess(seen["full"], 9000, "the page grows with the fleet")
        self.assertLess(seen["filtered"], seen["full"] + 2000)
        self.assertEqual(seen["cleared"], seen["full"])
        seen = self.probe("trainrig:")  # no node's row says it: the reasons are bare ids
        self.assertEqual(seen["rows"], [])
        seen = self.probe("gpu.pcie-link")
        self.assertEqual(seen["rows"], [name(NOT_READY)])

    def test_without_script_every_node_is_on_the_page(self):
        # Headless Chromium prints no DOM with script switched off; a copy whose policy forbids
        # its script is the page as a browser without script shows it.
        with open(self.html, encoding="utf-8") as f:
            page = f.read()
        copy = os.path.join(self.tmp, "no-script.html")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(page.replace("script-src 'unsafe-inline'", "script-src 'none'"))
        dom = browser("--dump-dom", "file://" + copy)
        self.assertEqual(dom.returncode, 0, dom.stderr[-2000:])
        self.assertIn("Executing inline script violates the following Content Security Policy",
                      dom.stderr)
        self.assertIn('<input id="filter" hidden=""', dom.stdout)
        for i in (0, SLOW_GPU, 612, NODES - 1):
            self.assertIn(name(i), dom.stdout)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "--generate":
        os.makedirs(sys.argv[3], exist_ok=True)
        print(*generate(sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else NODES))
        sys.exit(0)
    unittest.main(argv=sys.argv[:1], verbosity=2)
