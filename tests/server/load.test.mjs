// A small run of the load benchmark (bench/server_load.mjs) as a regression test of what
// must hold under concurrency, not of speed: every request succeeds, every answer (streamed
// or not, chat or completion) equals its sequential reference byte for byte, with more
// clients than slots so requests queue, and the server's peak RSS stays under its budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sourceDir, specflashBin, draftModel } from './harness.mjs';

function load(label, serveArgs) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'specflash-load-'));
  try {
    const json = path.join(dir, 'report.json');
    execFileSync(process.execPath, [
      path.join(sourceDir, 'bench/server_load.mjs'), '--bin', specflashBin, '--requests', '48', '--concurrency', '6',
      '--max-tokens', '64', '--label', label, '--json', json, '--', ...serveArgs,
    ], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 240000 });
    return JSON.parse(readFileSync(json, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const [label, args] of [
  ['plain', ['--parallel', '3', '--mem-budget', '40M', '--spec', 'none']],
  ['speculative', ['--parallel', '3', '--mem-budget', '40M', '--draft', draftModel, '--spec', 'chain']],
]) {
  test(`${label}: 48 requests from 6 clients on 3 slots all succeed with the reference text`, () => {
    const r = load(label, args);
    assert.equal(r.ok, 48);
    assert.equal(r.failed, 0);
    assert.equal(r.completion_tokens, 48 * 64);
    assert.equal(r.slots, 3);
    // Counted by the server (a sampled queue depth misses waits shorter than its period).
    assert.ok(r.requests_queued > 0, 'with 6 clients on 3 slots some requests waited in the queue');
    assert.ok(r.peak_rss_under_budget, `peak RSS ${r.peak_rss_bytes} vs budget ${r.memory_budget_bytes}`);
    if (label === 'speculative') assert.ok(r.spec_accepted_length > 1, 'drafts were accepted under load');
  });
}
