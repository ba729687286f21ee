"""Time lines for `watch replay`, built from ticks that `watch --once --json` read from a case
(docs/accuracy.md, "How watch is measured"). One tick a second."""
import copy

from cases import LEAD_S, HOLD_S

T0 = 1_800_000_000.0  # the first tick's time: any fixed moment, so results do not move
REBOOT_LINKS_S = 60    # how long the links take to train after the reboot
AFTER_REBOOT_S = 420   # watched after it: past the boot grace (300 s) and a link rule's 30 s

# Counters that grow with traffic: a fault's count is spread over the uptime at a steady rate
# (the rate doctor judges), starting when the fault does. Other counters step at once.
RAMPED = ("pcie_replays",)


def tick(doc, t, uptime, events=False):
    d = copy.deepcopy(doc)
    d["time"] = T0 + t
    d["uptime_seconds"] = uptime
    if not events:
        d["kernel_events"] = []
    d.pop("alerts", None)
    return d


def ramp(d, fault, base, since_s, uptime):
    for g, f, b in zip(d["gpus"], fault["gpus"], base["gpus"]):
        for key in RAMPED:
            if key in f and f.get(key, 0) > b.get(key, 0):
                rate = (f[key] - b.get(key, 0)) / uptime
                g[key] = b.get(key, 0) + int(rate * since_s)


def links_down(d, gpus=None):
    for g in d["gpus"]:
        if (gpus is None or g["index"] in gpus) and "nvlinks_up" in g:
            g["nvlinks_down"] = g["nvlinks_up"] + g.get("nvlinks_down", 0)
            g["nvlinks_up"] = 0


def build(kind, base, case, spike=None):
    """The ticks, and when the fault begins (seconds from the first tick; None when healthy)."""
    uptime = case.get("uptime_seconds") or base.get("uptime_seconds") or 259200.0
    out = []
    if kind == "steady":
        for t in range(LEAD_S + HOLD_S):
            out.append(tick(case, t, uptime - LEAD_S - HOLD_S + t, events=(t == LEAD_S)))
        return out, None
    if kind == "sustained":
        for t in range(LEAD_S):
            out.append(tick(base, t, uptime - LEAD_S + t))
        for t in range(LEAD_S, LEAD_S + HOLD_S):
            d = tick(case, t, uptime - LEAD_S + t, events=(t == LEAD_S))
            ramp(d, case, base, t - LEAD_S + 1, uptime)
            out.append(d)
        return out, LEAD_S
    if kind == "spike":
        for t in range(2 * LEAD_S + 1):
            out.append(tick(spike if t == LEAD_S else base, t, uptime - LEAD_S + t))
        return out, None
    if kind in ("reboot", "reboot-stuck"):
        for t in range(LEAD_S):
            out.append(tick(base, t, uptime - LEAD_S + t))
        for s in range(AFTER_REBOOT_S):
            t = LEAD_S + s
            if s < REBOOT_LINKS_S:
                d = tick(base, t, 5.0 + s)
                links_down(d)
            else:
                d = tick(case if kind == "reboot-stuck" else base, t, 5.0 + s)
            out.append(d)
        return out, (LEAD_S if kind == "reboot-stuck" else None)
    raise ValueError(kind)
