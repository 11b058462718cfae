// The server's answers equal `specflash run`'s for the same prompt and settings, through
// the official openai client: text and chat completions, streamed and not, plain and
// speculative (where drafts must really be proposed and accepted).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, runReference, chatmlPrompt, metrics, collectStream, draftModel } from './harness.mjs';

const N = 48;
const prompts = ['Once upon a time', 'Tom and Lily went to the park. They saw'];
const chatText = 'Tell me a story about a cat.';
let plain, spec;

before(async () => {
  plain = await startServer(['--parallel', '2', '--chat-template', 'chatml', '--spec', 'none']);
  spec = await startServer([
    '--parallel', '2', '--chat-template', 'chatml', '--draft', draftModel, '--spec', 'chain', '--draft-len', '4',
  ]);
});
after(async () => {
  assert.equal(await plain?.stop(), 0, 'plain server exits cleanly on SIGTERM');
  assert.equal(await spec?.stop(), 0, 'speculative server exits cleanly on SIGTERM');
});

for (const [name, server] of [['plain', () => plain], ['speculative', () => spec]]) {
  test(`${name}: /v1/completions equals specflash run (greedy), streamed and not`, async () => {
    const client = server().client();
    for (const prompt of prompts) {
      const expected = runReference(prompt, N);
      assert.ok(expected.length > 20, 'the reference run produced text');
      const r = await client.completions.create({
        model: 'stories260K', prompt, max_tokens: N, temperature: 0, seed: 7,
      });
      assert.equal(r.choices[0].text, expected);
      assert.equal(r.choices[0].finish_reason, 'length');
      assert.equal(r.usage.completion_tokens, N);
      assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + N);
      assert.equal(r.specflash.speculative, name === 'speculative');
      const s = await collectStream(
        await client.completions.create({ model: 'stories260K', prompt, max_tokens: N, temperature: 0, stream: true }),
        'text',
      );
      assert.equal(s.text, expected);
      assert.equal(s.final.choices[0].finish_reason, 'length');
      assert.ok(s.chunks.length > 5, 'the answer arrived in several chunks');
      if (name === 'speculative') {
        for (const ext of [r.specflash, s.final.specflash]) {
          assert.ok(ext.draft_tokens > 0, 'drafts were proposed');
          assert.ok(ext.accepted_draft_tokens > 0, 'drafts were accepted');
          assert.ok(ext.target_passes < N, 'fewer target passes than tokens');
        }
      }
    }
  });

  test(`${name}: /v1/chat/completions equals specflash run on the ChatML-rendered prompt`, async () => {
    const client = server().client();
    const expected = runReference(chatmlPrompt(chatText), N);
    assert.ok(expected.length > 20);
    const messages = [{ role: 'user', content: chatText }];
    const r = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: N, temperature: 0 });
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.choices[0].message.role, 'assistant');
    assert.equal(r.choices[0].message.content, expected);
    const s = await collectStream(
      await client.chat.completions.create({
        model: 'stories260K', messages, max_tokens: N, temperature: 0, stream: true,
        stream_options: { include_usage: true },
      }),
      'chat',
    );
    assert.equal(s.text, expected);
    assert.equal(s.chunks[0].choices[0].delta.role, 'assistant');
    const usage = s.chunks.at(-1).usage;
    assert.equal(usage.completion_tokens, N, 'include_usage adds a final usage chunk');
    if (name === 'speculative') assert.ok(s.final.specflash.accepted_draft_tokens > 0);
  });
}

test('speculative: per-request knobs (tree, draft length, none) keep the greedy text', async () => {
  const client = spec.client();
  const prompt = prompts[0];
  const expected = runReference(prompt, N);
  const tree = await client.completions.create({
    model: 'stories260K', prompt, max_tokens: N, temperature: 0, specflash: { method: 'tree', draft_len: 3 },
  });
  assert.equal(tree.choices[0].text, expected);
  assert.ok(tree.specflash.accepted_draft_tokens > 0);
  assert.ok(tree.specflash.draft_tokens > tree.specflash.target_passes * 3, 'a tree drafts more than a chain of 3');
  const short = await client.completions.create({
    model: 'stories260K', prompt, max_tokens: N, temperature: 0, specflash: { method: 'chain', draft_len: 1 },
  });
  assert.equal(short.choices[0].text, expected);
  assert.ok(short.specflash.draft_tokens <= short.specflash.target_passes, 'draft_len 1 drafts one token a cycle');
  const none = await client.completions.create({
    model: 'stories260K', prompt, max_tokens: N, temperature: 0, specflash: { method: 'none' },
  });
  assert.equal(none.choices[0].text, expected);
  assert.equal(none.specflash.speculative, false);
  assert.equal(none.specflash.draft_tokens, 0);
  const m = await metrics(spec.base);
  assert.ok(m.specflash_spec_accepted_tokens_total > 0);
  assert.ok(m.specflash_spec_accepted_length > 1, 'more than one token per target pass');
});

test('plain: sampling with a seed equals specflash run with the same seed', async () => {
  const client = plain.client();
  const prompt = prompts[1];
  const sampling = { temperature: 0.9, top_k: 20, top_p: 0.9, min_p: 0.02, seed: 1234 };
  const expected = runReference(prompt, N, [
    '--temp', '0.9', '--top-k', '20', '--top-p', '0.9', '--min-p', '0.02', '--seed', '1234',
  ]);
  const r = await client.completions.create({ model: 'stories260K', prompt, max_tokens: N, ...sampling });
  assert.equal(r.choices[0].text, expected);
  assert.notEqual(expected, runReference(prompt, N), 'sampling differs from greedy here');
});

test('stop strings end the text before the match and never leak part of it', async () => {
  const client = plain.client();
  const prompt = prompts[0];
  const full = runReference(prompt, N);
  for (const stop of ['Lily', 'little girl', 'e']) {
    const cut = full.slice(0, full.indexOf(stop));
    assert.ok(full.includes(stop) && cut.length < full.length);
    const r = await client.completions.create({ model: 'stories260K', prompt, max_tokens: N, temperature: 0, stop });
    assert.equal(r.choices[0].text, cut);
    assert.equal(r.choices[0].finish_reason, 'stop');
    const s = await collectStream(
      await client.completions.create({
        model: 'stories260K', prompt, max_tokens: N, temperature: 0, stop: [stop, 'zzzz'], stream: true,
      }),
      'text',
    );
    assert.equal(s.text, cut, `streamed text with stop '${stop}' ends exactly before it`);
    assert.equal(s.final.choices[0].finish_reason, 'stop');
  }
});

test('/v1/models, /health and /metrics', async () => {
  const models = await plain.client().models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['stories260K']);
  const health = await (await fetch(`${plain.base}/health`)).json();
  assert.equal(health.status, 'ok');
  assert.equal(health.slots, 2);
  const m = await metrics(plain.base);
  assert.ok(m.specflash_generated_tokens_total >= N * 6, 'tokens of the earlier requests were counted');
  assert.ok(m.specflash_tokens_per_second > 0);
  assert.ok(m.specflash_response_bytes_total > 1000);
  assert.equal(m.specflash_queue_depth, 0);
  assert.equal(m.specflash_slots_busy, 0);
  assert.ok(m['specflash_requests_total{status="2xx"}'] >= 8);
  assert.ok(m.specflash_peak_rss_bytes > 0);
});

test('a follow-up chat turn reuses its slot prefix cache', async () => {
  const client = plain.client();
  const messages = [{ role: 'user', content: 'Say something about a dog.' }];
  const first = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 16, temperature: 0 });
  messages.push(first.choices[0].message, { role: 'user', content: 'And then?' });
  const second = await client.chat.completions.create({ model: 'stories260K', messages, max_tokens: 16, temperature: 0 });
  assert.equal(second.specflash.slot, first.specflash.slot, 'the slot holding the history is chosen');
  assert.ok(second.specflash.reused_prompt_tokens > first.usage.prompt_tokens / 2, 'history K/V was reused');
});
