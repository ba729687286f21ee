'use strict';
// Computes reference token ids for every corpus file with independent
// reference implementations, fails if they disagree, and writes
//   CACHE_DIR/reference/<enc>/<name>.ids   (little-endian uint32, whole file
//                                          encoded in one call)
// for enc in gpt2, cl100k_base, o200k_base, llama3.
//
//   corpus/*.txt          gpt2/cl100k/o200k: tiktoken-rs (native), checked
//                         against tiktoken (wasm) encode_ordinary.
//                         llama3: llama3-tokenizer-js, checked against the
//                         wasm tiktoken core loaded with llama3.tiktoken.
//                         Both also against the Hugging Face tokenizers
//                         library loading hf-gpt2 / hf-llama3 tokenizer.json.
//                         (tiktoken-rs, llama3-tokenizer-js and HF tokenizers
//                         always honour special-token strings; the corpus has
//                         none, so their output is ordinary encoding here.)
//   invalid.bin           read with Buffer.toString('utf8') (U+FFFD for each
//                         maximal invalid subsequence); the decoded text is
//                         saved as corpus-extra/invalid.replaced.txt.
//   specials.txt          <name>.ids: ordinary encoding (special-token
//                         strings are plain text), wasm tiktoken checked
//                         against js-tiktoken (llama3: both loaded with
//                         llama3.tiktoken); specials.allowed.ids: every
//                         special token of the encoding recognised, checked
//                         against tiktoken-rs / llama3-tokenizer-js and HF.
//
// Usage: node reference-ids.cjs CACHE_DIR

const fs = require('fs');
const os = require('os');
const path = require('path');
const { die, npmRequire } = require('./tokdata-common.cjs');

const cache = process.argv[2] || die('usage: reference-ids.cjs CACHE_DIR');
if (os.endianness() !== 'LE') die('the .ids files are written from host-order Uint32Arrays');
const req = npmRequire(cache);
const rs = req('tiktoken-rs-node-linux-x64-gnu');
const wasm = req('tiktoken');
const jsTiktoken = req('js-tiktoken');
const { llama3Tokenizer } = req('llama3-tokenizer-js/bundle/commonjs-llama3-tokenizer-with-baked-data.cjs');
const { Tokenizer: HfTokenizer } = req('@anush008/tokenizers');

const OPENAI = ['gpt2', 'cl100k_base', 'o200k_base'];
const presets = JSON.parse(fs.readFileSync(path.join(cache, 'tokenizers', 'presets.json'), 'utf8'));

// tiktoken (wasm) and js-tiktoken loaded with llama3.tiktoken; both take
// ranks as "<marker> <first rank> b64 b64 ...".
function llama3Encoders() {
  const lines = fs.readFileSync(path.join(cache, 'tokenizers', 'llama3.tiktoken'), 'ascii')
    .split('\n').filter(Boolean);
  const b64 = lines.map((l, i) => {
    const [tok, rank] = l.split(' ');
    if (Number(rank) !== i) die('llama3.tiktoken ranks are not 0..n-1');
    return tok;
  });
  const p = presets.llama3;
  const ranks = `! 0 ${b64.join(' ')}`;
  // js-tiktoken wants a JavaScript-syntax pattern; Llama 3 splits like cl100k_base.
  if (p.pat_str !== presets.cl100k_base.pat_str) die('llama3 and cl100k_base split patterns differ');
  const jsPat = (req('js-tiktoken/ranks/cl100k_base').default || req('js-tiktoken/ranks/cl100k_base')).pat_str;
  return {
    wasm: new wasm.Tiktoken(ranks, p.special_tokens, p.pat_str),
    js: new jsTiktoken.Tiktoken({ pat_str: jsPat, special_tokens: p.special_tokens, bpe_ranks: ranks }),
  };
}
const llama3 = llama3Encoders();

const enc = {
  rs: Object.fromEntries(OPENAI.map((n) => [n, rs.getEncoding(n)])),
  wasm: { ...Object.fromEntries(OPENAI.map((n) => [n, wasm.get_encoding(n)])), llama3: llama3.wasm },
  js: { ...Object.fromEntries(OPENAI.map((n) => [n, jsTiktoken.getEncoding(n)])), llama3: llama3.js },
  hf: {
    gpt2: HfTokenizer.fromFile(path.join(cache, 'tokenizers', 'hf-gpt2', 'tokenizer.json')),
    llama3: HfTokenizer.fromFile(path.join(cache, 'tokenizers', 'hf-llama3', 'tokenizer.json')),
  },
};
const wasmDecode = (name, ids) => Buffer.from(enc.wasm[name].decode(Uint32Array.from(ids)));

const checks = [];

function compare(what, name, ref, other, otherLabel) {
  const n = Math.min(ref.length, other.length);
  let i = 0;
  while (i < n && ref[i] === other[i]) i++;
  if (i === n && ref.length === other.length) {
    checks.push({ what, encoding: name, against: otherLabel, tokens: ref.length, agree: true });
    return;
  }
  const offset = wasmDecode(name, ref.slice(0, i)).length;
  const context = wasmDecode(name, ref.slice(Math.max(0, i - 5), i + 5)).toString('utf8');
  die(`${what} [${name}]: reference and ${otherLabel} disagree at token ${i} (byte ${offset}; ` +
    `${ref.length} vs ${other.length} tokens): ${JSON.stringify([...ref.slice(i, i + 5)])} vs ` +
    `${JSON.stringify([...other.slice(i, i + 5)])} near ${JSON.stringify(context)}`);
}

function save(name, file, ids) {
  const dir = path.join(cache, 'reference', name);
  fs.mkdirSync(dir, { recursive: true });
  const arr = Uint32Array.from(ids);
  fs.writeFileSync(path.join(dir, file), Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength));
}

async function hfIds(which, text) {
  const e = await enc.hf[which].encode(text, null, { addSpecialTokens: false });
  return e.getIds();
}

// Decoding the reference ids must give back the text.
function roundTrip(label, name, ids, text) {
  if (!wasmDecode(name, ids).equals(Buffer.from(text, 'utf8'))) die(`${label} [${name}]: ids do not decode to the text`);
}

// Plain text without special-token strings: all implementations must agree.
async function plainText(label, file, text) {
  for (const name of OPENAI) {
    const ref = enc.rs[name].encode(text);
    roundTrip(label, name, ref, text);
    compare(label, name, ref, enc.wasm[name].encode_ordinary(text), 'tiktoken wasm');
    if (name === 'gpt2') compare(label, name, ref, await hfIds('gpt2', text), 'HF tokenizers hf-gpt2');
    save(name, `${file}.ids`, ref);
  }
  const ref = llama3Tokenizer.encode(text, { bos: false, eos: false });
  roundTrip(label, 'llama3', ref, text);
  compare(label, 'llama3', ref, enc.wasm.llama3.encode_ordinary(text), 'tiktoken wasm + llama3.tiktoken');
  compare(label, 'llama3', ref, await hfIds('llama3', text), 'HF tokenizers hf-llama3');
  save('llama3', `${file}.ids`, ref);
}

async function main() {
  const corpusDir = path.join(cache, 'corpus');
  for (const f of fs.readdirSync(corpusDir).filter((x) => x.endsWith('.txt')).sort()) {
    const t0 = Date.now();
    await plainText(`corpus/${f}`, path.basename(f, '.txt'), fs.readFileSync(path.join(corpusDir, f), 'utf8'));
    process.stderr.write(`  reference ids for corpus/${f} (${Date.now() - t0} ms)\n`);
  }

  const extra = path.join(cache, 'corpus-extra');
  const invalid = fs.readFileSync(path.join(extra, 'invalid.bin')).toString('utf8');
  fs.writeFileSync(path.join(extra, 'invalid.replaced.txt'), invalid, 'utf8');
  await plainText('corpus-extra/invalid.bin', 'invalid', invalid);

  const specials = fs.readFileSync(path.join(extra, 'specials.txt'), 'utf8');
  for (const name of [...OPENAI, 'llama3']) {
    const ordinary = enc.wasm[name].encode_ordinary(specials);
    roundTrip('specials.txt ordinary', name, ordinary, specials);
    compare('specials.txt ordinary', name, ordinary, enc.js[name].encode(specials, [], []), 'js-tiktoken');
    save(name, 'specials.ids', ordinary);

    const allowed = enc.wasm[name].encode(specials, 'all');
    if (name === 'llama3') {
      compare('specials.txt allowed', name, allowed, llama3Tokenizer.encode(specials, { bos: false, eos: false }),
        'llama3-tokenizer-js');
      compare('specials.txt allowed', name, allowed, await hfIds('llama3', specials), 'HF tokenizers hf-llama3');
    } else {
      compare('specials.txt allowed', name, allowed, enc.rs[name].encode(specials), 'tiktoken-rs');
      if (name === 'gpt2') {
        compare('specials.txt allowed', name, allowed, await hfIds('gpt2', specials), 'HF tokenizers hf-gpt2');
      }
    }
    if (allowed.length >= ordinary.length) die(`specials.txt [${name}]: no special token recognised`);
    save(name, 'specials.allowed.ids', allowed);
  }
  process.stderr.write(`  reference ids for corpus-extra; all ${checks.length} comparisons agree\n`);
  fs.writeFileSync(path.join(cache, 'reference', 'checks.json'), `${JSON.stringify(checks, null, 1)}\n`);
}

main().catch((e) => die(e.stack || String(e)));
