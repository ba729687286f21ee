'use strict';
// Helpers shared by the tokenizer test-data scripts (see fetch-tokenizer-data.sh).

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

function die(msg) {
  process.stderr.write(`${path.basename(process.argv[1])}: ${msg}\n`);
  process.exit(1);
}

// The npm packages live in CACHE_DIR/npm, not next to these scripts.
function npmRequire(cacheDir) {
  return createRequire(path.join(cacheDir, 'npm', 'package.json'));
}

function npmDir(cacheDir, pkg) {
  return path.join(cacheDir, 'npm', 'node_modules', pkg);
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

// GPT-2's table mapping each byte to a printable character; byte-level BPE
// vocabularies (gpt2 encoder.json, Hugging Face tokenizer.json) spell tokens
// with these characters.
function bytesToUnicode() {
  const keep = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const table = new Array(256);
  let shifted = 0;
  for (let b = 0; b < 256; b++) {
    table[b] = String.fromCharCode(keep.includes(b) ? b : 256 + shifted++);
  }
  return table;
}

function unicodeToBytes() {
  const inv = new Map();
  bytesToUnicode().forEach((ch, b) => inv.set(ch, b));
  return inv;
}

// Byte-level token string -> raw bytes.
function byteLevelDecode(token, inv) {
  const out = Buffer.alloc(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = inv.get(token[i]);
    if (b === undefined) throw new Error(`not a byte-level token: ${JSON.stringify(token)}`);
    out[i] = b;
  }
  return out;
}

function byteLevelEncode(bytes) {
  const table = bytesToUnicode();
  let s = '';
  for (const b of bytes) s += table[b];
  return s;
}

// Parse the `bpe_ranks` field of the tiktoken package's encoders/*.json:
// lines joined by "\n", each "<marker> <first rank> <b64> <b64> ..." with
// consecutive ranks. Returns [[base64, rank], ...] sorted by rank.
function parseBpeRanks(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [, offset, ...tokens] = line.split(' ');
    const first = Number.parseInt(offset, 10);
    if (!Number.isInteger(first)) throw new Error(`bad bpe_ranks line start: ${line.slice(0, 40)}`);
    tokens.forEach((t, i) => out.push([t, first + i]));
  }
  out.sort((a, b) => a[1] - b[1]);
  return out;
}

// Llama 3 vocabulary, merges, special tokens and split pattern as shipped in
// llama3-tokenizer-js. The package stores the Hugging Face vocabulary as the
// base64 of the '\n'-joined token strings (in id order) and the merges as
// pairs of vocabulary indices packed into 17-bit big-endian fields.
function loadLlama3(cacheDir) {
  const dir = npmDir(cacheDir, 'llama3-tokenizer-js');
  const data = fs.readFileSync(path.join(dir, 'src', 'data-converted.js'), 'utf8');
  const blob = (name) => {
    const m = data.match(new RegExp(`const ${name} = "([A-Za-z0-9+/=]*)"`));
    if (!m) die(`${name} not found in llama3-tokenizer-js/src/data-converted.js`);
    return Buffer.from(m[1], 'base64');
  };
  const vocab = blob('llama_vocab_base64').toString('utf8').split('\n');

  const packed = blob('llama_merges_binary');
  const count = Math.floor((packed.length * 8) / 17);
  if (count % 2 !== 0) die(`odd number of packed merge indices (${count})`);
  const at = (i) => (i < packed.length ? packed[i] : 0);
  const merges = [];
  for (let k = 0; k < count; k += 2) {
    const pair = [k, k + 1].map((j) => {
      const bit = j * 17;
      const word = (at(bit >> 3) << 16) | (at((bit >> 3) + 1) << 8) | at((bit >> 3) + 2);
      return (word >> (7 - (bit & 7))) & 0x1ffff;
    });
    if (pair[0] >= vocab.length || pair[1] >= vocab.length) die(`merge ${k / 2} out of range`);
    merges.push([vocab[pair[0]], vocab[pair[1]]]);
  }

  const code = fs.readFileSync(path.join(dir, 'src', 'llama3-tokenizer.js'), 'utf8');
  const pm = code.match(/const DIRTY_LLAMA3_REGEX_STRING = ("(?:[^"\\]|\\.)*")/);
  if (!pm) die('split pattern not found in llama3-tokenizer-js/src/llama3-tokenizer.js');
  const patStr = JSON.parse(pm[1]);

  // The special-token list is not exported; the tokenizer instance appends it
  // to its vocabulary, so read it back from there.
  const { llama3Tokenizer } = npmRequire(cacheDir)(
    'llama3-tokenizer-js/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs');
  const specials = llama3Tokenizer.vocabById.slice(vocab.length);

  // Cross-check our decoding against the package's own.
  if (llama3Tokenizer.vocabById.slice(0, vocab.length).some((t, i) => t !== vocab[i])) {
    die('llama3 vocabulary differs from the one the package builds');
  }
  const theirs = [...llama3Tokenizer.merges.keys()];
  if (theirs.length !== merges.length || theirs.some((m, i) => m !== merges[i].join(' '))) {
    die('llama3 merges differ from the ones the package decodes');
  }
  return { vocab, merges, specials, patStr, tokenizer: llama3Tokenizer };
}

module.exports = {
  die, npmRequire, npmDir, sha256, bytesToUnicode, unicodeToBytes,
  byteLevelDecode, byteLevelEncode, parseBpeRanks, loadLlama3,
};
