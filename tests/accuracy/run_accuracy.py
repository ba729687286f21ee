#!/usr/bin/env python3
"""Measures every check's false positives, false negatives and time to detect on the seeded-fault
corpus, and writes docs/accuracy.md from it (or checks that the file says what a run measures).

    tests/accuracy/run_accuracy.py --trainrig build/trainrig --write docs/accuracy.md
    tests/accuracy/run_accuracy.py --trainrig build/trainrig --check docs/accuracy.md

--check fails on any false positive or false negative, on a check or watch rule without a fault
case of its own (unless it is listed as out of reach, with why), and on a docs/accuracy.md that
differs from what this run measured.
"""
import argparse
import concurrent.futures
import difflib
import fnmatch
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as cs  # noqa: E402
import fleet_sim  # noqa: E402
import machines as mc  # noqa: E402
import render  # noqa: E402
from judge import Runner, judge_case  # noqa: E402
from materialize import Corpus, host_of  # noqa: E402
from score import Tally  # noqa: E402


def measure(trainrig, work, jobs, only):
    corpus = Corpus(work)
    corpus.build_classes()
    runner = Runner(trainrig)
    base_ticks = {c.name: runner.once(corpus.class_tree(c), corpus.class_fixture(c))
                  for c in mc.CLASSES}
    todo = [c for c in cs.all_cases() if not only or fnmatch.fnmatch(c.name, only)]
    # Trees are written here, one after another (the generators keep module state); the
    # commands run in parallel.
    results = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {}
        for case in todo:
            futures[pool.submit(judge_case, runner, corpus, case,
                                base_ticks[case.cls.name])] = case
        for f in concurrent.futures.as_completed(futures):
            results[futures[f].name] = f.result()
    for cls in mc.CLASSES:
        folder = os.path.join(work, "reports", cls.name)
        if not os.path.isdir(folder):
            continue
        doc, _ = runner.run(["fleet", "judge", "--json", folder], corpus.class_fixture(cls))
        for node in doc["nodes"]:
            for case in todo:
                if host_of(case) == node["name"]:
                    results[case.name]["fleet"] = node["state"]
                    results[case.name]["fleet_reasons"] = node.get("reasons", [])
    tally = Tally()
    for case in todo:
        tally.add(case, results[case.name])
    return todo, results, tally


def scratch_dir():
    """Memory-backed scratch space when the machine has it: the corpus writes thousands of small
    files, and every validate report is fsynced file by file, which a virtual disk pays for
    (docs/testing.md). None: the temp directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--trainrig", required=True)
    ap.add_argument("--fleet-sim", required=True, metavar="PROGRAM",
                    help="accuracy_fleet_sim, built from fleet_gray_sim.cpp")
    out = ap.add_mutually_exclusive_group(required=True)
    out.add_argument("--write", metavar="FILE")
    out.add_argument("--check", metavar="FILE")
    out.add_argument("--show", action="store_true", help="print each case's results")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", help="cases whose name matches this pattern (not with --write)")
    ap.add_argument("--keep", metavar="DIR", help="build the corpus here and keep it")
    args = ap.parse_args()
    if args.only and (args.write or args.check):
        ap.error("--only measures part of the corpus: use it with --show")
    work = args.keep or tempfile.mkdtemp(prefix="trainrig-accuracy-", dir=scratch_dir())
    try:
        trainrig = os.path.abspath(args.trainrig)
        todo, results, tally = measure(trainrig, work, args.jobs, args.only)
        listed = Runner(trainrig).run(["doctor", "--list", "--json"],
                                            os.path.join(work, "nvml", mc.CLASSES[0].name + ".json"))
        checks = [c["id"] for c in listed[0]["checks"]]
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.show:
        for case in todo:
            print(case.name, json.dumps(results[case.name], sort_keys=True))
        for p in tally.problems:
            print(p)
        return 1 if tally.problems else 0
    text = render.document(todo, results, tally, fleet_sim.run(os.path.abspath(args.fleet_sim)))
    if args.write:
        with open(args.write + ".tmp", "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(args.write + ".tmp", args.write)
        for p in tally.problems:
            print(p, file=sys.stderr)
        return 0
    failed = False
    for p in tally.problems:
        print(p, file=sys.stderr)
        failed = True
    for line in render.uncovered(tally, checks, results):
        print("no corpus case: " + line, file=sys.stderr)
        failed = True
    with open(args.check) as f:
        old = f.read()
    if old != text:
        sys.stderr.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                   args.check, "measured now"))
        print("%s differs from what was measured: run %s --write %s" %
              (args.check, os.path.relpath(__file__), args.check), file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
