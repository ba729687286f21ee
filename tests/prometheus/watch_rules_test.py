"""trainrig watch's real metrics through packaging/prometheus/trainrig-rules.yml.

Runs `trainrig watch` on a fixture machine (the fake NVML, tests/fakes/README.md, and a saved
kernel log), takes the metrics it writes, and checks that
  - every metric the rules read, and every label they match or group on, is one watch renders
    (a rule on a metric that does not exist can never fire);
  - fed to promtool as one node's scrapes, the alerts watch holds come out of the rules with
    watch's rule ids and severities and the GPUs' UUIDs, nothing else fires or waits, and the
    per-node and fleet recording rules hold what the metrics say.
Usage: watch_rules_test.py TRAINRIG_BINARY SOURCE_DIR. Python's standard library only.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BINARY, ROOT = sys.argv[1], sys.argv[2]
RULES = os.path.join(ROOT, "packaging", "prometheus", "trainrig-rules.yml")
FIXTURE = os.path.join(ROOT, "tests", "fixtures")
JOB, NODE = "trainrig-watch", "node-1:9402"

# Added to the article box's kernel log: an Xid 13 on GPU 0 (0000:01:00) and a corrected AER
# error on a root port, so the xid and pcie-aer-corrected rules fire too.
EXTRA_KMSG = (
    "4,900,183600000000,-;NVRM: Xid (PCI:0000:01:00): 13, pid=77, Graphics Exception\n"
    "3,901,183600000100,-;pcieport 0000:00:03.1: AER: PCIe Bus Error: severity=Corrected, "
    "type=Physical Layer, (Receiver ID)\n")
# A default changed (no `for`, so it fires within the run) and a rule of the node's own.
NODE_RULES = """
[[rule]]
name = "gpu-thermal-slowdown"
for = "0s"

[[rule]]
name = "memory-full"
kind = "threshold"
field = "memory_used_ratio"
above = 0.5
severity = "info"
"""
# Alerts the run must raise, so that the comparison below is not vacuous.
MUST_FIRE = {"gpu-lost", "xid-fatal", "xid", "pcie-aer-corrected", "gpu-thermal-slowdown",
             "memory-full"}

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def parse_metrics(text):
    """Samples of the Prometheus text format: [(name, {label: value}, value)]."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: re.sub(r"\\(.)", lambda e: "\n" if e[1] == "n" else e[1], v)
                  for k, v in LABEL.findall(m[2] or "")}
        out.append((m[1], labels, float(m[3])))
    return out


def rule_exprs(text):
    """The expr of every rule in the rules file, single-line or block."""
    exprs, lines = [], text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^(\s*)expr: ?(.*)$", line)
        if not m:
            continue
        indent, first = len(m[1]), m[2].strip()
        if first not in ("|", ">-", ">", "|-"):
            exprs.append(first)
            continue
        body = []
        for nxt in lines[i + 1:]:
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                break
            body.append(nxt.strip())
        exprs.append(" ".join(body))
    return exprs


def camel(rule):
    return "Trainrig" + "".join(p.capitalize() for p in rule.split("-"))


def series(name, labels):
    body = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{name}{{{body}}}"


class WatchThroughRules(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.promtool = shutil.which("promtool")
        if not cls.promtool:
            raise RuntimeError("promtool not found: install Debian's prometheus package "
                               "(scripts/install-deps.sh)")
        cls.dir = tempfile.mkdtemp(prefix="trainrig-prom-rules-")
        root = os.path.join(cls.dir, "root")
        os.makedirs(os.path.join(root, "dev"))
        with open(os.path.join(FIXTURE, "machines", "article-box", "dev", "kmsg")) as f:
            kmsg = f.read()
        with open(os.path.join(root, "dev", "kmsg"), "w") as f:
            f.write(kmsg + EXTRA_KMSG)
        rules_toml = os.path.join(cls.dir, "rules.toml")
        with open(rules_toml, "w") as f:
            f.write(NODE_RULES)
        env = dict(os.environ,
                   TRAINRIG_FAKE_NVML=os.path.join(FIXTURE, "nvml", "article-box.json"))
        run = subprocess.run(
            [BINARY, "watch", "--no-listen", "--textfile", cls.dir, "--duration", "1.5",
             "--interval", "0.2", "--root", root, "--rules", rules_toml],
            env=env, capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            raise RuntimeError(f"watch exited {run.returncode}: {run.stderr}")
        with open(os.path.join(cls.dir, "trainrig.prom")) as f:
            cls.samples = parse_metrics(f.read())
        with open(RULES) as f:
            cls.rules_text = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def labels_of(self, name):
        return set().union(*[set(l) for n, l, _ in self.samples if n == name] or [set()])

    def test_rules_read_only_what_watch_renders(self):
        rendered = {n for n, _, _ in self.samples}
        exprs = rule_exprs(self.rules_text)
        self.assertGreater(len(exprs), 20)
        used = set()
        for e in exprs:
            used |= set(re.findall(r"(?<![\w:])(trainrig_[a-z0-9_]+)(?![\w:])", e))
        self.assertGreater(len(used), 5)
        self.assertEqual(sorted(used - rendered), [], "metrics the rules read but watch lacks")
        # Labels matched in a selector are labels of that metric.
        for e in exprs:
            for name, body in re.findall(r"(?<![\w:])(trainrig_[a-z0-9_]+)\{([^}]*)\}", e):
                for label in re.findall(r"([a-z_]+)\s*(?:=|!=|=~|!~)\s*\"", body):
                    self.assertIn(label, self.labels_of(name), f"{name}{{{body}}}")
        # Labels grouped or joined on are job/instance or a label watch renders.
        all_labels = set().union(*[set(l) for _, l, _ in self.samples]) | {"job", "instance"}
        for e in exprs:
            for group in re.findall(r"\b(?:by|on|ignoring|group_left)\s*\(([^)]*)\)", e):
                for label in filter(None, (s.strip() for s in group.split(","))):
                    self.assertIn(label, all_labels, e)

    def test_alerts_watch_holds_come_out_of_the_rules(self):
        watch_alerts = [l for n, l, _ in self.samples if n == "trainrig_alerts_firing"]
        self.assertTrue(MUST_FIRE <= {a["rule"] for a in watch_alerts},
                        f"watch raised only {sorted(a['rule'] for a in watch_alerts)}")
        # Each default rule's alert, as the rules file names it.
        alert_for = {}
        current = None
        for line in self.rules_text.splitlines():
            m = re.match(r"^\s*- alert: (\S+)", line)
            if m:
                current = m[1]
            for rule in re.findall(r'[{,]\s*rule="([^"]+)"', line):
                alert_for[rule] = current
        self.assertEqual(alert_for.get("gpu-lost"), camel("gpu-lost"))
        uuid_of = {l["gpu"]: l["uuid"] for n, l, _ in self.samples
                   if n == "trainrig_gpu_info" and l.get("uuid")}

        node = {"job": JOB, "instance": NODE}
        inputs = [{"series": series("up", node), "values": "1x10"}]
        for name, labels, value in self.samples:
            kept = {**node, **{k: v for k, v in labels.items() if v != ""}}  # as scraped
            step = "+60" if name == "trainrig_watch_ticks_total" else ""  # one tick a second
            inputs.append({"series": series(name, kept), "values": f"{value!r}{step}x10"})

        expected = []
        for a in watch_alerts:
            labels = {"alertname": alert_for.get(a["rule"], "TrainrigWatchAlert"),
                      "alertstate": "firing", **node,
                      **{k: v for k, v in a.items() if v != ""}}
            if a.get("gpu") in uuid_of:
                labels["uuid"] = uuid_of[a["gpu"]]
            expected.append({"labels": series("ALERTS", labels), "value": 1})

        gpu_up = [v for n, _, v in self.samples if n == "trainrig_gpu_up"]
        temps = [v for n, _, v in self.samples if n == "trainrig_gpu_temperature_celsius"]
        critical = any(a["severity"] == "critical" for a in watch_alerts)

        def one(record, value, labels=node):
            return {"expr": record, "eval_time": "2m",
                    "exp_samples": [{"labels": series(record, labels), "value": value}]}

        job = {"job": JOB}
        test = {
            "rule_files": [RULES],
            "evaluation_interval": "1m",
            "tests": [{
                "interval": "1m",
                "input_series": inputs,
                "promql_expr_test": [
                    # All of them, and nothing pending: a healthy watch trips none of the
                    # rules judged in Prometheus.
                    {"expr": "ALERTS", "eval_time": "2m", "exp_samples": expected},
                    one("instance:trainrig_gpu_up:count", len(gpu_up)),
                    one("instance:trainrig_gpu_up:sum", sum(gpu_up)),
                    one("instance:trainrig_gpu_temperature_celsius:max", max(temps)),
                    one("job:trainrig_nodes:count", 1, job),
                    one("job:trainrig_nodes_failing:count", 1 if critical else 0, job),
                ],
            }],
        }
        path = os.path.join(self.dir, "from-watch.test.yml")
        with open(path, "w") as f:
            json.dump(test, f, indent=1)  # JSON is YAML
        run = subprocess.run([self.promtool, "test", "rules", path], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
