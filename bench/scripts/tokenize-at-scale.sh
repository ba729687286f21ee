#!/usr/bin/env bash
# `data tokenize` end to end on a multi-GB JSONL input: documents/s, MB/s and the peak resident
# memory (which must stay bounded by workers x batch size, not grow with the input). The input
# is the test corpus's paragraphs, JSON-encoded and repeated up to SIZE_MB megabytes.
# Usage: bench/scripts/tokenize-at-scale.sh [BUILD_DIR] [SIZE_MB] [WORKDIR]  -> JSON on stdout
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (Debian package time)" >&2; exit 2; }
build=$(realpath "${1:-build}")
size_mb=${2:-2048}
work=${3:-$(mktemp -d)}
cache=${TRAINRIG_TEST_CACHE:-$HOME/.cache/trainrig-test}
bash tests/data/fetch-tokenizer-data.sh "$cache" >&2
python3 - "$cache/corpus" "$work/big.jsonl" "$size_mb" <<'PY'
import glob, json, os, sys
corpus, out, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
docs = []
for path in sorted(glob.glob(os.path.join(corpus, "*.txt"))):
    text = open(path, encoding="utf-8").read()
    paras = [p for p in text.split("\n\n") if p.strip()]
    docs += [json.dumps({"text": p}, ensure_ascii=False) + "\n" for p in paras]
blob = "".join(docs).encode()
with open(out, "wb") as f:
    written = 0
    while written < size_mb * 1_000_000:
        f.write(blob)
        written += len(blob)
PY
export TRAINRIG_TOKENIZERS="$cache/tokenizers"
python3 - "$build/trainrig" "$work" <<'PY'
import json, os, subprocess, sys, time
binary, work = sys.argv[1], sys.argv[2]
size = os.path.getsize(f"{work}/big.jsonl")
results = []
for workers in (1, 2):
    start = time.monotonic()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", f"{work}/rss", binary, "data", "tokenize", "--input", f"{work}/big.jsonl", "--tokenizer", "gpt2",
                        "--append-eod", "--output-prefix", f"{work}/out", "--workers", str(workers), "--json"],
                       check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    peak_kib = int(open(f"{work}/rss").read().split()[-1])  # GNU time: maximum resident set, KiB
    j = json.loads(r.stdout)
    results.append({"workers": workers, "input_bytes": size, "wall_seconds": wall,
                    "documents": j["documents"], "tokens": j["tokens"],
                    "documents_per_s": j["documents_per_s"], "input_mb_per_s": j["input_mb_per_s"],
                    "peak_rss_mib": peak_kib / 1024})
    print(f"workers {workers}: {j['documents_per_s']:.0f} docs/s, {j['input_mb_per_s']:.1f} MB/s, "
          f"peak RSS {peak_kib/1024:.0f} MiB", file=sys.stderr)
    v = subprocess.run([binary, "data", "verify", f"{work}/out"], capture_output=True, text=True)
    assert v.returncode == 0, v.stdout + v.stderr
print(json.dumps({"input_mb": size / 1e6, "results": results}, indent=2))
PY
rm -f "$work/big.jsonl" "$work"/out.* "$work/rss"
