"""Scores what the commands said against what each case expects (docs/accuracy.md).

Per command and case, a check flagged that the case does not expect, or flagged above its
expected level, is a false positive; an expected check not flagged at its level is a false
negative. The decisions (validate's verdict, npd's health, slurm's drain, fleet's state) are
scored the same way per case.
"""
import fnmatch

from judge import LEVEL_RANK

COMMANDS = ("doctor", "validate", "npd", "slurm", "watch")


def expected_for(case, res, command):
    if command in ("doctor", "validate"):
        return dict(case.expect)
    if command in ("npd", "slurm"):
        judged = res["judged"]
        return {c: lvl for c, lvl in case.expect.items()
                if any(fnmatch.fnmatch(j, c) for j in judged) and lvl in ("fail", "unknown")}
    if command == "watch":
        if case.kind == "healthy":
            return {}
        if case.watch_expect is not None:
            return dict(case.watch_expect)
        judged = set(res["watch_rules"])
        return {c: lvl for c, lvl in case.expect.items() if c in judged}
    raise KeyError(command)


VERDICT = {"NOT READY": "fail", "UNKNOWN": "unknown", "READY WITH WARNINGS": "warn",
           "READY": "pass"}
HEALTH = {"unhealthy": "fail", "unknown": "unknown", "healthy": "pass"}
FLEET = {"DRAIN": "fail", "UNKNOWN": "unknown", "DRIFTED": "warn", "READY": "pass"}


def level_of(expect):
    levels = set(expect.values())
    for lvl in ("fail", "unknown", "warn"):
        if lvl in levels:
            return lvl
    return "pass"


def decisions(case, res):
    """(command, expected, said) for each command's verdict on the node: validate's verdict
    follows every check; npd and slurm only the checks a scheduler drains for, and warnings
    drain nothing; the fleet drains what validate calls NOT READY."""
    want = level_of(case.expect)
    health = level_of(expected_for(case, res, "npd"))
    # A required check it could not judge keeps validate from a plain READY (coverage).
    covered = "warn" if case.unjudged and want == "pass" else want
    out = [("validate", covered, VERDICT[res["verdict"]]),
           ("npd", health, HEALTH[res["npd_health"]]),
           ("slurm", "fail" if health == "fail" else "pass",
            "fail" if res["slurm_action"] == "drain" else "pass")]
    if "fleet" in res:
        fleet = "pass" if want == "warn" else want
        if case.drifts and fleet != "fail":
            fleet = "warn"
        out.append(("fleet", fleet, FLEET[res["fleet"]]))
    watch = level_of(expected_for(case, res, "watch"))
    said = level_of(res["watch"]) if res["watch"] else "pass"
    out.append(("watch", "fail" if watch == "unknown" else watch, said))
    return out


def resolve(want, said):
    """Expectations with a pattern ("gpu.*": every GPU check could not judge) become one per
    check said that matches it; a pattern nothing matches stays, to count as missed."""
    out = {}
    for check, lvl in want.items():
        if "*" not in check:
            out[check] = lvl
            continue
        matched = [c for c in said if fnmatch.fnmatch(c, check)]
        for c in matched:
            out[c] = lvl
        if not matched:
            out[check] = lvl
    return out


class Tally:
    def __init__(self):
        self.cases = {}            # check -> set of fault case names planted for it
        self.fp = {}               # (command, check) -> [case names]
        self.fn = {}
        self.detect = {}           # check -> [seconds]
        self.decision = {}         # command -> [cases, fp, fn]
        self.coverage = [0, 0, 0]  # healthy cases, those with checks not judged, wrong ones
        self.problems = []         # lines naming each false result

    def add(self, case, res):
        for c in list(case.expect) + list(case.watch_expect or {}):
            if c not in case.cls.baseline:
                self.cases.setdefault(c, set()).add(case.name)
        for command in COMMANDS:
            said = res[command]
            want = resolve(expected_for(case, res, command), said)
            for check in set(want) | set(said):
                w, s = want.get(check), said.get(check)
                if LEVEL_RANK.get(s, 0) > LEVEL_RANK.get(w, 0):
                    self.fp.setdefault((command, check), []).append(case.name)
                    self.problems.append("false positive: %s says %s %s on %s (expected %s)"
                                         % (command, check, s, case.name, w or "nothing"))
                elif LEVEL_RANK.get(s, 0) < LEVEL_RANK.get(w, 0):
                    self.fn.setdefault((command, check), []).append(case.name)
                    self.problems.append("false negative: %s says %s %s on %s (expected %s)"
                                         % (command, check, s or "nothing", case.name, w))
                elif command == "watch" and w:
                    t = res["detect"].get("%s:%s" % (check, w))
                    if t is not None:
                        self.detect.setdefault(check, []).append(t)
        if case.kind == "healthy":
            # validate's coverage names exactly the required checks it could not judge.
            self.coverage[0] += 1
            self.coverage[1] += bool(case.unjudged)
            if tuple(res["coverage_missing"]) != case.unjudged:
                self.coverage[2] += 1
                self.problems.append("wrong coverage: validate's report of %s names %s not "
                                     "judged (expected %s)"
                                     % (case.name, ", ".join(res["coverage_missing"]) or "none",
                                        ", ".join(case.unjudged) or "none"))
        for command, want, said in decisions(case, res):
            d = self.decision.setdefault(command, [0, 0, 0])
            d[0] += 1
            if LEVEL_RANK.get(said, 0) > LEVEL_RANK.get(want, 0):
                d[1] += 1
                self.problems.append("false positive: %s judged %s %s (expected %s)"
                                     % (command, case.name, said, want))
            elif LEVEL_RANK.get(said, 0) < LEVEL_RANK.get(want, 0):
                d[2] += 1
                self.problems.append("false negative: %s judged %s %s (expected %s)"
                                     % (command, case.name, said, want))
