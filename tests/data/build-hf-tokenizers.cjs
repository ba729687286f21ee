'use strict';
// Writes Hugging Face `tokenizers` files for GPT-2 and Llama 3, laid out like
// the tokenizer.json files published with those models:
//   CACHE_DIR/tokenizers/hf-gpt2/tokenizer.json    (from gpt2/encoder.json + vocab.bpe)
//   CACHE_DIR/tokenizers/hf-llama3/tokenizer.json  (from llama3-tokenizer-js)
// Run after convert-tiktoken.cjs. reference-ids.cjs later checks both files
// with the Hugging Face tokenizers library.
//
// Usage: node build-hf-tokenizers.cjs CACHE_DIR

const fs = require('fs');
const path = require('path');
const { die, loadLlama3 } = require('./tokdata-common.cjs');

const cache = process.argv[2] || die('usage: build-hf-tokenizers.cjs CACHE_DIR');
const tokDir = path.join(cache, 'tokenizers');

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };

function addedToken(id, content, normalized) {
  return { id, content, single_word: false, lstrip: false, rstrip: false, normalized, special: true };
}

// JSON.stringify would move integer-like keys ("0", "12") to the front of the
// vocabulary object; write it in id order like the published files.
function vocabJson(tokens) {
  return `{${tokens.map((t, id) => `${JSON.stringify(t)}:${id}`).join(',')}}`;
}

function write(name, doc, vocabTokens) {
  const marker = '"@VOCAB@"';
  const text = JSON.stringify(doc).replace(marker, () => vocabJson(vocabTokens));
  fs.mkdirSync(path.join(tokDir, name), { recursive: true });
  fs.writeFileSync(path.join(tokDir, name, 'tokenizer.json'), text);
  process.stderr.write(`  ${name}/tokenizer.json: ${vocabTokens.length} vocab, ` +
    `${doc.model.merges.length} merges, ${doc.added_tokens.length} added\n`);
}

function model(affix, ignoreMerges, merges) {
  return {
    type: 'BPE', dropout: null, unk_token: null,
    continuing_subword_prefix: affix, end_of_word_suffix: affix,
    fuse_unk: false, byte_fallback: false,
    ...(ignoreMerges ? { ignore_merges: true } : {}),
    vocab: '@VOCAB@', merges,
  };
}

// GPT-2.
{
  const encoder = JSON.parse(fs.readFileSync(path.join(tokDir, 'gpt2', 'encoder.json'), 'utf8'));
  const tokens = [];
  for (const [tok, id] of Object.entries(encoder)) tokens[id] = tok;
  if (tokens.length !== 50257 || tokens.includes(undefined)) die('gpt2 encoder.json ids are not 0..50256');
  const lines = fs.readFileSync(path.join(tokDir, 'gpt2', 'vocab.bpe'), 'utf8').split('\n');
  if (!lines[0].startsWith('#version')) die('gpt2 vocab.bpe has no #version header');
  const merges = lines.slice(1).filter((l) => l !== '');
  if (merges.length !== 50000) die(`gpt2 vocab.bpe has ${merges.length} merges, expected 50000`);
  write('hf-gpt2', {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [addedToken(50256, '<|endoftext|>', true)],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: BYTE_LEVEL,
    model: model('', false, merges),
  }, tokens);
}

// Llama 3.
{
  const { vocab, merges, specials, patStr } = loadLlama3(cache);
  const bos = specials[0];
  if (bos !== '<|begin_of_text|>' || specials.length !== 256) die('unexpected llama3 special tokens');
  write('hf-llama3', {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((s, i) => addedToken(vocab.length + i, s, false)),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: patStr }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: {
      type: 'Sequence',
      processors: [
        { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
        {
          type: 'TemplateProcessing',
          single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
          pair: [
            { SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } },
            { SpecialToken: { id: bos, type_id: 1 } }, { Sequence: { id: 'B', type_id: 1 } },
          ],
          special_tokens: { [bos]: { id: bos, ids: [vocab.length], tokens: [bos] } },
        },
      ],
    },
    decoder: BYTE_LEVEL,
    model: model(null, true, merges.map(([a, b]) => `${a} ${b}`)),
  }, vocab);
}
