// Bad requests get 4xx OpenAI-style error objects (never a crash), a client that leaves
// mid-stream frees its slot, a full server answers 503, and a budget that cannot hold
// every slot's KV cache stops the server at start-up.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import OpenAI from 'openai';
import { startServer, metrics, specflashBin, targetModel } from './harness.mjs';

const KEY = 'test-secret';
let server, client;

// One slot, no queue, and weights streamed at an emulated 10 MB/s (~0.1 s per token), so
// that a stream is still running when the test acts on it.
before(async () => {
  server = await startServer([
    '--api-key', KEY, '--ctx-size', '128', '--parallel', '1', '--queue-size', '0', '--mem-budget', '0%',
    '--io-bandwidth', '10M', '--chat-template', 'chatml',
  ]);
  client = server.client({ apiKey: KEY });
});
after(async () => assert.equal(await server?.stop(), 0));

async function rawPost(path, body, headers = { Authorization: `Bearer ${KEY}` }) {
  const r = await fetch(`${server.base}${path}`, {
    method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body,
  });
  return { status: r.status, body: await r.json() };
}

function assertErrorObject(body, { type = 'invalid_request_error', param, code } = {}) {
  assert.equal(typeof body.error?.message, 'string');
  assert.ok(body.error.message.length > 5, 'the message says what is wrong');
  assert.equal(body.error.type, type);
  assert.ok('param' in body.error && 'code' in body.error);
  if (param !== undefined) assert.equal(body.error.param, param);
  if (code !== undefined) assert.equal(body.error.code, code);
}

async function expectApiError(promise, status, ErrorClass, { param, code } = {}) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof ErrorClass, `${e.constructor.name}: ${e.message}`);
    assert.equal(e.status, status);
    if (param !== undefined) assert.equal(e.param, param);
    if (code !== undefined) assert.equal(e.code, code);
    return true;
  });
}

test('malformed JSON and non-object bodies are 400 invalid_json', async () => {
  for (const body of ['{"prompt": "x"', 'not json', '[1, 2]', '']) {
    for (const path of ['/v1/completions', '/v1/chat/completions']) {
      const r = await rawPost(path, body);
      assert.equal(r.status, 400, `${path} ${body}`);
      assertErrorObject(r.body, { code: 'invalid_json' });
    }
  }
});

test('fields of the wrong type or range are 400 naming the field', async () => {
  const base = { model: 'stories260K', prompt: 'Hi', max_tokens: 2 };
  const cases = [
    [{ max_tokens: 'ten' }, 'max_tokens'],
    [{ max_tokens: 0 }, 'max_tokens'],
    [{ temperature: 'hot' }, 'temperature'],
    [{ temperature: 3 }, 'temperature'],
    [{ top_p: 1.5 }, 'top_p'],
    [{ top_k: 1.5 }, 'top_k'],
    [{ min_p: [] }, 'min_p'],
    [{ seed: 'abc' }, 'seed'],
    [{ stop: 5 }, 'stop'],
    [{ stop: ['ok', 3] }, 'stop'],
    [{ stream: 'yes' }, 'stream'],
    [{ prompt: { text: 'Hi' } }, 'prompt'],
    [{ model: 42 }, 'model'],
    [{ n: 2 }, 'n'],
    [{ specflash: 'fast' }, 'specflash'],
    [{ specflash: { method: 'beam' } }, 'specflash.method'],
    [{ specflash: { draft_len: 0 } }, 'specflash.draft_len'],
  ];
  for (const [patch, param] of cases) {
    await expectApiError(client.completions.create({ ...base, ...patch }), 400, OpenAI.BadRequestError, { param });
  }
  const chat = { model: 'stories260K', max_tokens: 2 };
  for (const [patch, param] of [
    [{ messages: 'hi' }, 'messages'],
    [{ messages: [] }, 'messages'],
    [{ messages: [{ role: 'user' }] }, 'messages[0].content'],
    [{ messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
    [{ messages: [{ role: 'user', content: 7 }] }, 'messages[0].content'],
    [{}, 'messages'],
  ]) {
    await expectApiError(client.chat.completions.create({ ...chat, ...patch }), 400, OpenAI.BadRequestError, { param });
  }
  await expectApiError(client.completions.create({ model: 'stories260K' }), 400, OpenAI.BadRequestError, {
    param: 'prompt',
  });
});

test('speculation knobs on a server without a draft model are 400', async () => {
  await expectApiError(
    client.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 2, specflash: { method: 'chain' } }),
    400, OpenAI.BadRequestError, { param: 'specflash' },
  );
});

test('a prompt over the context is 400 context_length_exceeded', async () => {
  const prompt = 'the cat sat on the mat and '.repeat(40);
  await expectApiError(client.completions.create({ model: 'stories260K', prompt, max_tokens: 2 }), 400,
    OpenAI.BadRequestError, { code: 'context_length_exceeded', param: 'prompt' });
  await expectApiError(
    client.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: prompt }] }),
    400, OpenAI.BadRequestError, { code: 'context_length_exceeded', param: 'messages' },
  );
});

test('an unknown model name is 404 model_not_found', async () => {
  await expectApiError(client.completions.create({ model: 'gpt-4o', prompt: 'Hi', max_tokens: 2 }), 404,
    OpenAI.NotFoundError, { code: 'model_not_found', param: 'model' });
});

test('a bad or missing API key is 401; the right one is accepted', async () => {
  const wrong = server.client({ apiKey: 'not-the-key' });
  await expectApiError(wrong.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 2 }), 401,
    OpenAI.AuthenticationError, { code: 'invalid_api_key' });
  await expectApiError(wrong.models.list(), 401, OpenAI.AuthenticationError);
  const none = await rawPost('/v1/completions', JSON.stringify({ prompt: 'Hi' }), {});
  assert.equal(none.status, 401);
  assertErrorObject(none.body, { code: 'invalid_api_key' });
  const ok = await client.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 2, temperature: 0 });
  assert.equal(ok.usage.completion_tokens, 2);
});

test('unknown fields are ignored', async () => {
  const r = await client.completions.create({
    model: 'stories260K', prompt: 'Hi', max_tokens: 2, temperature: 0, frobnicate: { x: 1 }, logit_bias: {},
    user: 'someone',
  });
  assert.equal(r.usage.completion_tokens, 2);
});

test('unknown routes are 404 and oversized bodies 413, both as error objects', async () => {
  const r = await fetch(`${server.base}/v1/nothing-here`);
  assert.equal(r.status, 404);
  assertErrorObject(await r.json());
  const big = await rawPost('/v1/completions', JSON.stringify({ prompt: 'x'.repeat(9 << 20) }));
  assert.equal(big.status, 413);
  assertErrorObject(big.body, { code: 'request_too_large' });
});

async function waitForIdle() {
  for (let i = 0; i < 100; ++i) {
    const h = await (await fetch(`${server.base}/health`)).json();
    if (h.slots_busy === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

test('a client that disconnects mid-stream frees its slot', async () => {
  const before = await metrics(server.base);
  const stream = await client.completions.create({
    model: 'stories260K', prompt: 'Once upon a time', max_tokens: 100, temperature: 0, stream: true,
  });
  let chunks = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.text) ++chunks;
    if (chunks === 2) break;  // leaving the loop aborts the request
  }
  const h = await (await fetch(`${server.base}/health`)).json();
  assert.ok(h.slots === 1);
  assert.ok(await waitForIdle(), 'the slot is free again within 5 s');
  const after = await metrics(server.base);
  assert.equal(after.specflash_client_disconnects_total - before.specflash_client_disconnects_total, 1);
  const generated = after.specflash_generated_tokens_total - before.specflash_generated_tokens_total;
  assert.ok(generated < 40, `generation stopped early (${generated} of 100 tokens)`);
  // The one slot serves the next request.
  const r = await client.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 2, temperature: 0 });
  assert.equal(r.usage.completion_tokens, 2);
});

test('with every slot busy and no queue, a request gets 503 and the running one is unharmed', async () => {
  const controller = new AbortController();
  const stream = await client.completions.create(
    { model: 'stories260K', prompt: 'Once upon a time', max_tokens: 12, temperature: 0, stream: true },
    { signal: controller.signal },
  );
  const iterator = stream[Symbol.asyncIterator]();
  await iterator.next();  // the first chunk: the slot is taken
  await expectApiError(client.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 2 }), 503,
    OpenAI.InternalServerError, { code: 'server_overloaded' });
  let rest = 0;
  for (let r = await iterator.next(); !r.done; r = await iterator.next()) ++rest;
  assert.ok(rest > 2, 'the first stream ran to its end');
  assert.ok(await waitForIdle());
});

test('a budget that cannot hold every slot refuses to start, naming the slots', () => {
  const tooMany = spawnSync(specflashBin, ['serve', '-m', targetModel, '--port', '0', '--parallel', '8',
    '--mem-budget', '4M'], { encoding: 'utf8', timeout: 20000 });
  assert.equal(tooMany.status, 1);
  assert.match(tooMany.stderr, /^error: .*budget.*8 slots.*--parallel/m);
});

test('a model without a chat template serves completions, and chat is a 400 saying how to pick one', async () => {
  const bare = await startServer([]);
  try {
    const c = bare.client();
    await expectApiError(
      c.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 }),
      400, OpenAI.BadRequestError, { code: 'chat_template_missing', param: 'messages' },
    );
    await assert.rejects(
      c.chat.completions.create({ model: 'stories260K', messages: [{ role: 'user', content: 'Hi' }] }),
      /--chat-template NAME/,
    );
    const r = await c.completions.create({ model: 'stories260K', prompt: 'Hi', max_tokens: 3, temperature: 0 });
    assert.equal(r.usage.completion_tokens, 3);
  } finally {
    assert.equal(await bare.stop(), 0);
  }
});
