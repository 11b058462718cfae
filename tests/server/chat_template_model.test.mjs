// Chat completions use the chat template from the model's own metadata: a small random-
// weight model is made (by `specflash synth`) with the Phi-3 vocabulary from ../shared,
// whose tokenizer.chat_template the engine recognises as phi3; the server, started without
// --chat-template, must answer exactly what `specflash run` answers on the phi3-rendered
// conversation (special-token markers included), streamed and not.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startServer, runReference, specflashBin, sharedDir } from './harness.mjs';

const N = 24;
let dir, model, server;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'specflash-server-'));
  model = path.join(dir, 'phi3-vocab.gguf');
  execFileSync(specflashBin, [
    'synth', '--arch', 'llama', '--vocab-from', path.join(sharedDir, 'vocab/ggml-vocab-phi-3.gguf'), '--embd', '64',
    '--layers', '2', '--heads', '4', '--ffn', '128', '--type', 'F16', '--seed', '3', '-q', '-o', model,
  ]);
  server = await startServer(['--ctx-size', '256'], { model });
});
after(async () => {
  assert.equal(await server?.stop(), 0);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('chat uses the template in the model metadata (phi3) and equals specflash run', async () => {
  const messages = [
    { role: 'system', content: 'You are brief.' },
    { role: 'user', content: 'Name a colour.' },
  ];
  const rendered = '<|system|>\nYou are brief.<|end|>\n<|user|>\nName a colour.<|end|>\n<|assistant|>\n';
  const expected = runReference(rendered, N, ['--temp', '0'], model);
  // This model's greedy reply contains multi-byte characters (Cyrillic among others), so
  // the stream below also shows that detokenisation never splits a UTF-8 character.
  assert.match(expected, /[\u0400-\u04FF]/);
  const client = server.client();
  const r = await client.chat.completions.create({ model: 'phi3-vocab', messages, max_tokens: N, temperature: 0 });
  assert.equal(r.choices[0].message.content, expected);
  // The markers were parsed as special tokens: the rendered prompt is far fewer tokens
  // than its characters would be as plain text.
  assert.ok(r.usage.prompt_tokens < 30, `prompt tokens: ${r.usage.prompt_tokens}`);
  let streamed = '';
  for await (const chunk of await client.chat.completions.create({
    model: 'phi3-vocab', messages, max_tokens: N, temperature: 0, stream: true,
  })) {
    const piece = chunk.choices[0]?.delta?.content ?? '';
    assert.ok(!piece.includes('\uFFFD'), `chunk ${JSON.stringify(piece)} holds a broken character`);
    streamed += piece;
  }
  assert.equal(streamed, expected);
});
