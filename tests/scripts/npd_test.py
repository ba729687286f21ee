"""`trainrig npd` as node-problem-detector runs it, and the Kubernetes example that runs it
(packaging/kubernetes/trainrig-npd.yaml). The plugin protocol: exit 0 healthy, 1 a problem,
2 unknown, and one line of stdout of at most max_output_length (80) characters, the check id
first. The example's monitor config is read from its ConfigMap and its rule's own arguments are
run against machine trees, so the example cannot drift from the command.

Usage: npd_test.py TRAINRIG_BINARY SOURCE_DIR"""
import json
import os
import subprocess
import sys
import time
import unittest

import yaml  # Debian's python3-yaml (scripts/install-deps.sh)

BINARY, SOURCE = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MACHINES = os.path.join(SOURCE, "tests/fixtures/machines")
NVML = os.path.join(SOURCE, "tests/fixtures/nvml")
MANIFEST = os.path.join(SOURCE, "packaging/kubernetes/trainrig-npd.yaml")


def load_manifest():
    with open(MANIFEST) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    by_kind = {d["kind"]: d for d in docs}
    config_map = by_kind["ConfigMap"]
    monitor = json.loads(config_map["data"]["trainrig-monitor.json"])
    return by_kind, monitor


def seconds(text):
    assert text.endswith("s"), text
    return float(text[:-1])


def npd(args, root, env=None):
    """The rule's own command line, with the host's root replaced by a machine tree."""
    args = list(args)
    args[args.index("--root") + 1] = root
    e = dict(os.environ, **(env or {}))
    started = time.monotonic()
    r = subprocess.run([BINARY, *args], capture_output=True, text=True, timeout=120, env=e)
    return r, time.monotonic() - started


class Manifest(unittest.TestCase):
    def test_monitor_runs_trainrig_within_the_plugin_limits(self):
        by_kind, monitor = load_manifest()
        self.assertEqual(monitor["plugin"], "custom")
        limit = monitor["pluginConfig"]["max_output_length"]
        self.assertEqual(limit, 80)
        (rule,) = monitor["rules"]
        self.assertEqual(rule["type"], "permanent")
        self.assertEqual(rule["condition"], monitor["conditions"][0]["type"])
        self.assertEqual(rule["path"], "/usr/bin/trainrig")
        self.assertEqual(rule["args"][0], "npd")
        budget = float(rule["args"][rule["args"].index("--budget") + 1])
        # trainrig stops on its own before node-problem-detector kills it.
        self.assertLess(budget, seconds(rule["timeout"]))
        self.assertLessEqual(seconds(rule["timeout"]), seconds(monitor["pluginConfig"]["timeout"]))

    def test_daemonset_mounts_what_the_rule_reads(self):
        by_kind, monitor = load_manifest()
        (rule,) = monitor["rules"]
        pod = by_kind["DaemonSet"]["spec"]["template"]["spec"]
        self.assertEqual(pod["serviceAccountName"], by_kind["ServiceAccount"]["metadata"]["name"])
        (container,) = pod["containers"]
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertEqual(volumes["config"]["configMap"]["name"],
                         by_kind["ConfigMap"]["metadata"]["name"])
        self.assertIn(f"--config.custom-plugin-monitor={mounts['config']}/trainrig-monitor.json",
                      container["command"])
        root = rule["args"][rule["args"].index("--root") + 1]
        self.assertEqual(mounts["host"], root)
        self.assertEqual(volumes["host"]["hostPath"]["path"], "/")
        env = {e["name"] for e in container["env"]}
        self.assertIn("NODE_NAME", env)  # node-problem-detector names the node it reports on


class Protocol(unittest.TestCase):
    def setUp(self):
        _, monitor = load_manifest()
        self.args = monitor["rules"][0]["args"]
        self.limit = monitor["pluginConfig"]["max_output_length"]

    def check_line(self, r):
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertLessEqual(len(lines[0]), self.limit, lines[0])
        return lines[0]

    def test_healthy_node(self):
        r, _ = npd(self.args, os.path.join(MACHINES, "epyc-4xa100-healthy"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(self.check_line(r), r"^ok: \d+ checks passed(, \d+ not applicable)?$")

    def test_failing_node_names_its_check_first(self):
        r, _ = npd(self.args, os.path.join(MACHINES, "article-box"))
        self.assertEqual(r.returncode, 1, r.stderr)
        line = self.check_line(r)
        self.assertTrue(line.startswith("pci.gpu-visible "), line)
        self.assertTrue(line.endswith("(+3 more)"), line)

    def test_a_hung_driver_is_unknown_within_the_budget(self):
        args = self.args + ["--timeout", "1"]
        r, took = npd(args, os.path.join(MACHINES, "hgx-8xh100"),
                      {"TRAINRIG_FAKE_NVML": os.path.join(NVML, "faults/hang.json")})
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("NVML did not answer", self.check_line(r))
        self.assertLess(took, 20)

    def test_budget_bounds_each_call(self):
        # A quarter of the budget per call: NVML's own --timeout would come too late.
        args = list(self.args)
        args[args.index("--budget") + 1] = "2"
        args += ["--timeout", "30"]
        r, took = npd(args, os.path.join(MACHINES, "hgx-8xh100"),
                      {"TRAINRIG_FAKE_NVML": os.path.join(NVML, "faults/hang.json")})
        self.assertEqual(r.returncode, 2)
        self.assertIn("within 0.5 s", self.check_line(r))
        self.assertLess(took, 2)

    def test_bad_selection_is_unknown_with_a_reason(self):
        r, _ = npd(self.args + ["--only", "gpu.nonesuch"],
                   os.path.join(MACHINES, "epyc-4xa100-healthy"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("gpu.nonesuch", self.check_line(r))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
