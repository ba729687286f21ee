// Single-thread encode throughput of native tiktoken-rs (npm tiktoken-rs-node-linux-x64-gnu) on
// the given files, concatenated: one warm-up encode, then REPEATS timed ones. Prints JSON.
// Usage: node tiktoken-rs-encode.cjs NODE_MODULES ENCODING REPEATS FILE...
'use strict';
const fs = require('fs');
const path = require('path');
const [modules, encoding, repeats, ...files] = process.argv.slice(2);
const tiktoken = require(path.join(modules, 'tiktoken-rs-node-linux-x64-gnu'));
const text = files.map((f) => fs.readFileSync(f, 'utf8')).join('');
const bytes = Buffer.byteLength(text, 'utf8');
const enc = tiktoken.getEncoding(encoding);
let tokens = enc.encode(text).length;
const samples = [];
for (let i = 0; i < Number(repeats); i++) {
  const start = process.hrtime.bigint();
  tokens = enc.encode(text).length;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  samples.push(bytes / seconds / 1e6);
}
console.log(JSON.stringify({ encoding, bytes, tokens, mb_per_s: samples }));
