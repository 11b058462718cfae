#!/usr/bin/env node
// Bounded load test of `specflash serve` on loopback: starts the server, sends a fixed
// number of requests with a fixed number of concurrent clients, checks every answer, and
// reports latency percentiles, aggregate tokens/s and the server's peak RSS against its
// memory budget. A benchmark: it prints a table and JSON and fails only when an answer is
// wrong (a failed request, or text lost or duplicated), never on time.
//
//   node bench/server_load.mjs [--requests 200] [--concurrency 8] [--max-tokens 64]
//                              [--json FILE] [--label NAME] -- [serve arguments...]
//
// Every request is greedy (temperature 0), so each (prompt, endpoint) has exactly one right
// answer: it is fetched once, sequentially, before the load starts, and every answer under
// load (streamed or not) must equal it byte for byte. Only 127.0.0.1 is contacted.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split >= 0 ? argv.slice(0, split) : argv;
const serveArgs = split >= 0 ? argv.slice(split + 1) : [];
const opt = (name, def) => {
  const i = own.indexOf(`--${name}`);
  return i >= 0 ? own[i + 1] : def;
};
const nRequests = Number(opt('requests', 200));
const concurrency = Number(opt('concurrency', 8));
const maxTokens = Number(opt('max-tokens', 64));
const jsonPath = opt('json', '');
const label = opt('label', 'server');
const bin = opt('bin', path.join(root, 'build/specflash'));

const prompts = [
  'Once upon a time',
  'The little dog wanted to',
  'Lily and Tom went to the park. They saw',
  'One day, a big bird',
  'The sun was shining and',
  'Mom said to Ben:',
  'There was a small red ball',
  'The cat looked at the',
];

function startServer() {
  const args = ['serve', '--host', '127.0.0.1', '--port', '0', '--chat-template', 'chatml', ...serveArgs];
  if (!serveArgs.includes('-m') && !serveArgs.includes('--model')) args.push('-m', path.join(root, 'models/stories260K.gguf'));
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      log += d;
      const m = log.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve({ child, base: `http://127.0.0.1:${m[1]}`, log: () => log });
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}):\n${log}`)));
  });
}

function body(i) {
  const prompt = prompts[i % prompts.length];
  const chat = Math.floor(i / prompts.length) % 2 === 1;
  const stream = i % 2 === 1;
  const common = { model: 'stories260K', max_tokens: maxTokens, temperature: 0, stream };
  return {
    key: `${chat ? 'chat' : 'text'}:${prompt}`,
    chat,
    stream,
    path: chat ? '/v1/chat/completions' : '/v1/completions',
    json: chat ? { ...common, messages: [{ role: 'user', content: prompt }] } : { ...common, prompt },
  };
}

// One request; returns {text, tokens, ms, ttftMs} or throws with the reason.
async function send(base, req) {
  const t0 = performance.now();
  const res = await fetch(base + req.path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ ...req.json, stream_options: req.stream ? { include_usage: true } : undefined }),
  });
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
  if (!req.stream) {
    const r = await res.json();
    const c = r.choices[0];
    const ms = performance.now() - t0;
    return { text: req.chat ? c.message.content : c.text, tokens: r.usage.completion_tokens, ms, ttftMs: ms };
  }
  const raw = await res.text();  // the whole event stream, then parsed strictly
  const ms = performance.now() - t0;
  const events = raw.split('\n\n').filter((e) => e.length);
  if (events.at(-1) !== 'data: [DONE]') throw new Error('stream did not end with [DONE]');
  let text = '';
  let tokens = -1;
  let finishes = 0;
  for (const e of events.slice(0, -1)) {
    if (!e.startsWith('data: ')) throw new Error(`bad event: ${e.slice(0, 80)}`);
    const chunk = JSON.parse(e.slice(6));
    if (chunk.error) throw new Error(`error event: ${chunk.error.message}`);
    for (const c of chunk.choices) {
      text += req.chat ? (c.delta.content ?? '') : c.text;
      if (c.finish_reason) ++finishes;
    }
    if (chunk.usage) tokens = chunk.usage.completion_tokens;
  }
  if (finishes !== 1) throw new Error(`${finishes} finish chunks`);
  return { text, tokens, ms, ttftMs: NaN };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function metrics(base) {
  const out = {};
  for (const line of (await (await fetch(`${base}/metrics`)).text()).split('\n')) {
    if (line && !line.startsWith('#')) out[line.slice(0, line.lastIndexOf(' '))] = Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return out;
}

const server = await startServer();
const failures = [];
try {
  // The reference answers, one request at a time.
  const expected = new Map();
  // Indices 0 .. 2 * prompts.length - 1 cover every (prompt, endpoint) key once.
  for (let i = 0; i < 2 * prompts.length; ++i) {
    const r = body(i);
    expected.set(r.key, await send(server.base, { ...r, stream: false, json: { ...r.json, stream: false } }));
  }
  const before = await metrics(server.base);
  let maxQueue = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      maxQueue = Math.max(maxQueue, (await metrics(server.base)).specflash_queue_depth);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();

  const results = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < nRequests) {
        const i = next++;
        const req = body(i);
        try {
          const r = await send(server.base, req);
          const want = expected.get(req.key);
          if (r.text !== want.text) throw new Error(`text differs from the reference:\n got  ${JSON.stringify(r.text)}\n want ${JSON.stringify(want.text)}`);
          if (r.tokens !== want.tokens) throw new Error(`usage says ${r.tokens} tokens, reference ${want.tokens}`);
          results.push({ ...r, stream: req.stream });
        } catch (e) {
          failures.push(`request ${i} (${req.key}, stream=${req.stream}): ${e.message}`);
        }
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  sampling = false;
  await sampler;
  const after = await metrics(server.base);
  const status = readFileSync(`/proc/${server.child.pid}/status`, 'utf8');
  const hwmKiB = Number(status.match(/VmHWM:\s+(\d+) kB/)[1]);
  const lat = results.map((r) => r.ms).sort((a, b) => a - b);
  const tokens = results.reduce((s, r) => s + r.tokens, 0);
  const budget = after.specflash_memory_budget_bytes;
  const budgetArg = serveArgs.includes('--mem-budget') ? serveArgs[serveArgs.indexOf('--mem-budget') + 1] : 'unlimited';
  const report = {
    label,
    serve_args: serveArgs,
    requests: nRequests,
    concurrency,
    max_tokens: maxTokens,
    ok: results.length,
    failed: failures.length,
    wall_seconds: wall,
    completion_tokens: tokens,
    aggregate_tokens_per_s: tokens / wall,
    latency_ms: { p50: percentile(lat, 50), p90: percentile(lat, 90), p99: percentile(lat, 99), max: lat.at(-1) },
    max_queue_depth_seen: maxQueue,
    requests_queued: after.specflash_requests_queued_total - before.specflash_requests_queued_total,
    slots: after.specflash_slots,
    spec_accepted_length:
      after.specflash_spec_cycles_total > before.specflash_spec_cycles_total ? after.specflash_spec_accepted_length : null,
    weight_bytes_streamed: after.specflash_weight_bytes_streamed_total - before.specflash_weight_bytes_streamed_total,
    peak_rss_bytes: hwmKiB * 1024,
    memory_budget: budgetArg,
    memory_budget_bytes: budget,
    memory_footprint_bytes: after.specflash_memory_footprint_bytes,
    peak_rss_under_budget: budget > 0 ? hwmKiB * 1024 < budget : null,
  };
  const mib = (b) => (b / 1048576).toFixed(1);
  console.log(`| config | requests (ok/failed) | clients | slots | p50 ms | p99 ms | tokens/s | accepted length | peak RSS MiB | budget MiB | footprint MiB |`);
  console.log(`|---|---|---|---|---|---|---|---|---|---|---|`);
  console.log(
    `| ${label} | ${report.ok}/${report.failed} | ${concurrency} | ${report.slots} | ${report.latency_ms.p50.toFixed(1)} | ` +
      `${report.latency_ms.p99.toFixed(1)} | ${report.aggregate_tokens_per_s.toFixed(0)} | ` +
      `${report.spec_accepted_length ? report.spec_accepted_length.toFixed(2) : '-'} | ${mib(report.peak_rss_bytes)} | ` +
      `${budget > 0 ? mib(budget) : budgetArg} | ${mib(report.memory_footprint_bytes)} |`,
  );
  console.log(JSON.stringify(report));
  if (jsonPath) writeFileSync(jsonPath, JSON.stringify(report, null, 2) + '\n');
} finally {
  server.child.kill('SIGTERM');
}
if (failures.length) {
  console.error(`${failures.length} failed requests:\n${failures.slice(0, 10).join('\n')}`);
  process.exit(1);
}
