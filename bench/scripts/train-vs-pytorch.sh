#!/usr/bin/env bash
# CPU training throughput, side by side: `trainrig bench run train` against the same model in
# PyTorch (bench/scripts/gpt2_torch.py or llama_torch.py, fp32, Debian's python3-torch), same shape, batch,
# threads and timed steps, alternating PAIRS times. Each tool times its own steps after the
# warm-up; the figure compared is the median tokens/s.
#
# Usage: train-vs-pytorch.sh TRAINRIG OUT.json [MODEL SEQ BATCH STEPS PAIRS]
#   MODEL: tiny (2 layers, 4 heads, 64 channels), gpt2 (124M) or llama-tiny (2 layers, 4 heads
#   on 2 key/value heads, 64 channels, MLP 176); GPT-2's vocabulary in every case.
set -euo pipefail
trainrig=$1 out=$2 model=${3:-tiny} seq=${4:-256} batch=${5:-4} steps=${6:-8} pairs=${7:-3}
here=$(cd "$(dirname "$0")" && pwd)
threads=$(nproc)
case $model in
    tiny) shape=(--layers 2 --heads 4 --dim 64) torch_model=gpt2_torch.py ;;
    gpt2) shape=(--layers 12 --heads 12 --dim 768) torch_model=gpt2_torch.py ;;
    llama-tiny) shape=(--layers 2 --heads 4 --kv-heads 2 --dim 64 --ffn 176) torch_model=llama_torch.py ;;
    *) echo "train-vs-pytorch: unknown model $model" >&2; exit 2 ;;
esac
runs=()
for ((i = 0; i < pairs; i++)); do
    ours=$("$trainrig" bench run train --train-model "$model" --train-seq "$seq" \
        --train-batch "$batch" --threads "$threads" --json |
        python3 -c 'import json,sys; d=json.load(sys.stdin); r=[x for x in d["results"] if x["name"]=="tokens"][0]; print(json.dumps({"tool":"trainrig","tokens_per_s":r["median"],"samples":r["samples"],"verify":r["verify_detail"]}))')
    theirs=$(/usr/bin/python3 "$here/$torch_model" "${shape[@]}" --seq "$seq" --batch "$batch" \
        --steps $((steps + 2)) --warmup-steps 2 --threads "$threads")
    runs+=("$ours" "$theirs")
    echo "pair $((i + 1)): $ours" >&2
    echo "        $theirs" >&2
done
printf '%s\n' "${runs[@]}" | python3 -c '
import json, statistics, sys, platform, datetime
runs = [json.loads(l) for l in sys.stdin]
ours = statistics.median(r["tokens_per_s"] for r in runs if r["tool"] == "trainrig")
theirs = statistics.median(r["tokens_per_s"] for r in runs if r["tool"] == "pytorch")
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
print(json.dumps({"date": datetime.date.today().isoformat(), "host": platform.node(), "cpu": cpu,
                  "model": sys.argv[1], "seq": int(sys.argv[2]), "batch": int(sys.argv[3]),
                  "trainrig_tokens_per_s": ours, "pytorch_tokens_per_s": theirs,
                  "ratio_trainrig_over_pytorch": ours / theirs, "runs": runs}, indent=2))
' "$model" "$seq" "$batch" > "$out"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("trainrig %.0f tokens/s, PyTorch %.0f tokens/s, ratio %.2f" % (d["trainrig_tokens_per_s"], d["pytorch_tokens_per_s"], d["ratio_trainrig_over_pytorch"]))' "$out"
