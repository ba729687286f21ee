"""The fleet gray-failure section of docs/accuracy.md, from accuracy_fleet_sim's JSON (built
from fleet_gray_sim.cpp: the simulation runs `fleet judge`'s own code in one process)."""
import json
import subprocess


def run(sim):
    doc = json.loads(subprocess.run([sim], capture_output=True, text=True, check=True).stdout)
    out = []
    w = out.append
    w("## Fleet gray failures\n\n")
    w("A node that is only slower than its peers fails no check of its own: `fleet judge` finds "
      "it by comparing measurements across the fleet (docs/fleet.md, \"Outliers\"). Measured by "
      "judging simulated fleets with the judge's own code (tests/accuracy/fleet_gray_sim.cpp): "
      "%s nodes of %d GPUs validated once a day for %d days, every sample with %g %% Gaussian "
      "noise, each value the median of its samples as in a validate report. Each day %d nodes "
      "are slow by each of 3, 5 and 10 %%: half in one GPU's GEMM, half in the node's NCCL bus "
      "bandwidth (a slow link). Judge settings: z = %g, min deviation %g %%.\n\n"
      % (format(doc["nodes"], ","), doc["gpus_per_node"], doc["days"], doc["noise"] * 100,
         doc["slow_per_level_per_day"], doc["runs"][0]["z"], doc["runs"][0]["min_deviation"] * 100))
    w("| samples per value | found at 3 % | found at 5 % | found at 10 % | false drains per "
      "1,000 healthy node-judgements |\n|---|---|---|---|---|\n")
    for r in doc["runs"]:
        found = r["found"]
        cells = ["%.1f %% (%d of %d)" % (100 * found[k]["rate"], found[k]["drained"],
                                         found[k]["judged"]) for k in ("3", "5", "10")]
        note = "" if r["min_samples"] <= r["samples"] and r["samples"] >= 3 else \
            " (not judged by default: shown with the limit lifted)"
        w("| %d%s | %s | %.2f (%d of %d) |\n" % (r["samples"], note, " | ".join(cells),
                                                r["false_drains_per_1000"], r["false_drains"],
                                                r["healthy_judgements"]))
    w("\nThe goal, a 5 % slowdown found at least 95 % of the time with at most 1 false drain per "
      "1,000 healthy node-judgements, takes medians of 3 or more samples: a single sample drains "
      "about 11 healthy nodes in 1,000. So `fleet judge` judges no value that is the median of "
      "fewer than 3 samples (`FleetOptions::min_samples`), and validate takes 5 to 10 of each GPU "
      "benchmark. The detection limit is the 3 % minimum deviation: a 3 % slowdown is found "
      "about half the time, anything smaller is within the fleet's noise (judge it against a "
      "golden node with `validate --baseline`).\n")
    return "".join(out)
