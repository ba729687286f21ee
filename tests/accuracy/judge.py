"""Runs every command over one case and reads what each said, as {check id: level}
(docs/accuracy.md, "What each command is asked")."""
import json
import os
import subprocess

import timeline as tl
from materialize import host_of

LEVEL_RANK = {"warn": 1, "unknown": 2, "fail": 3}


def worst(a, b):
    return a if LEVEL_RANK.get(a, 0) >= LEVEL_RANK.get(b, 0) else b


class Runner:
    def __init__(self, trainrig):
        self.trainrig = trainrig

    def run(self, args, fixture, timeout_s=None, ok=(0, 1, 2)):
        env = dict(os.environ, TRAINRIG_FAKE_NVML=fixture, TRAINRIG_TIMEOUT=str(timeout_s or 5),
                   LC_ALL="C")
        env.pop("TRAINRIG_ROOT", None)
        p = subprocess.run([self.trainrig] + args, env=env, capture_output=True, text=True,
                           timeout=120)
        if p.returncode not in ok or not p.stdout.strip():
            raise RuntimeError("trainrig %s exited %d: %s" % (" ".join(args), p.returncode,
                                                             p.stderr.strip()[-400:]))
        return json.loads(p.stdout), p.returncode

    def once(self, root, fixture, timeout_s=None):
        # A case with a hung driver call waits its own timeout; the others get a generous one, so
        # that a busy CI machine never turns a slow answer into a hung GPU.
        deadline = str(timeout_s or 5)
        doc, _ = self.run(["watch", "--once", "--json", "--root", root, "--call-timeout", deadline],
                          fixture, timeout_s)
        return doc


def doctor_levels(doc):
    out = {}
    for f in doc["findings"]:
        lvl = {"fail": "fail", "warn": "warn", "error": "unknown"}.get(f["status"])
        if lvl:
            out[f["id"]] = worst(out.get(f["id"]), lvl)
    return out


def validate_levels(doc):
    out = {}
    for item in doc["items"]:
        out[item["id"]] = worst(out.get(item["id"]), item["level"])
    return out


def health_levels(doc):
    out = {p["id"]: "fail" for p in doc["failures"]}
    for p in doc["unknowns"]:
        out.setdefault(p["id"], "unknown")
    return out


def watch_levels(doc):
    out, first = {}, {}
    for a in doc["alerts"]:
        if a["state"] != "firing":
            continue
        key = a.get("check") or "watch:" + a["rule"]
        lvl = "fail" if a["severity"] == "critical" else "warn"
        out[key] = worst(out.get(key), lvl)
        first.setdefault((key, lvl), a["offset_seconds"])
    return out, first


def judge_case(runner, corpus, case, base_tick):
    """Everything the commands said about one case."""
    root, fixture, spike = corpus.materialize(case)
    host = host_of(case)
    t = case.timeout
    res = {"case": case.name}
    doc, _ = runner.run(["doctor", "--json", "--root", root], fixture, t)
    res["doctor"] = doctor_levels(doc)
    report = os.path.join(corpus.work, "reports", case.cls.name, host)
    os.makedirs(os.path.dirname(report), exist_ok=True)
    doc, _ = runner.run(["validate", "--level", "quick", "--root", root, "--json", "--report",
                         report], fixture, t)
    res["validate"] = validate_levels(doc)
    res["verdict"] = doc["verdict"]
    res["coverage_missing"] = sorted(doc["coverage"]["missing"])
    doc, _ = runner.run(["npd", "--json", "--root", root], fixture, t)
    res["npd"], res["npd_health"], res["judged"] = health_levels(doc), doc["health"], doc["judged"]
    doc, _ = runner.run(["slurm", "healthcheck", "--dry-run", "--json", "--root", root,
                         "--node", host], fixture, t)
    res["slurm"], res["slurm_action"] = health_levels(doc), doc["action"]["kind"]
    case_tick = runner.once(root, fixture, t)
    spike_tick = runner.once(root, spike, t) if spike else None
    ticks, start = tl.build(case.timeline, base_tick, case_tick, spike_tick)
    path = os.path.join(corpus.work, "timelines", host + ".json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for d in ticks:
            f.write(json.dumps(d) + "\n")
    doc, _ = runner.run(["watch", "replay", "--json", path], fixture)
    res["watch"], first = watch_levels(doc)
    res["watch_rules"] = [r.get("check") or "watch:" + r["name"] for r in doc["rules"]]
    res["detect"] = {"%s:%s" % k: (v - start if start is not None else None)
                     for k, v in first.items()}
    return res
