// Shared helpers for the server tests: start `specflash serve` on a free loopback port,
// wait until it answers /health, run `specflash run` for reference outputs, and read
// /metrics. Only 127.0.0.1 is ever contacted.
import { spawn, execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';

const here = path.dirname(fileURLToPath(import.meta.url));
export const sourceDir = process.env.SPECFLASH_SOURCE_DIR ?? path.resolve(here, '../..');
export const specflashBin = process.env.SPECFLASH_BIN ?? path.join(sourceDir, 'build/specflash');
export const targetModel = path.join(sourceDir, 'models/stories260K.gguf');
export const draftModel = path.join(sourceDir, 'models/stories260K-draft.gguf');
export const sharedDir = process.env.SPECFLASH_SHARED_DIR ?? path.resolve(sourceDir, '../shared');

// Starts the server with extra arguments; resolves once it listens and /health answers.
export async function startServer(args = [], { model = targetModel } = {}) {
  const child = spawn(specflashBin, ['serve', '-m', model, '--host', '127.0.0.1', '--port', '0', ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${stderr}`)), 20000);
    child.stderr.on('data', (d) => {
      stderr += d.toString();
      const m = stderr.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${stderr}`));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; ++i) {
    try {
      const r = await fetch(`${base}/health`);
      if (r.ok) break;
    } catch (e) {
      if (i > 100) throw e;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    child,
    port,
    base,
    stderr: () => stderr,
    client: (options = {}) => new OpenAI({ baseURL: `${base}/v1`, apiKey: 'unused', maxRetries: 0, ...options }),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve(child.exitCode);
        child.on('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

// `specflash run` on the same model: the reference text for a prompt (greedy unless
// `sampling` gives other run flags).
export function runReference(prompt, nPredict, sampling = ['--temp', '0'], model = targetModel) {
  return execFileSync(
    specflashBin,
    ['run', '-m', model, '-p', prompt, '-n', String(nPredict), ...sampling],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
}

// The prompt the engine's ChatML template renders for one user message (what the server
// must feed the model for a chat completion).
export function chatmlPrompt(userText) {
  return `<|im_start|>user\n${userText}<|im_end|>\n<|im_start|>assistant\n`;
}

// /metrics as {name or name{labels}: number}.
export async function metrics(base) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const out = {};
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out[line.slice(0, i)] = Number(line.slice(i + 1));
  }
  return out;
}

// Collects a streamed completion: the concatenated text, the chunks, the final chunk.
export async function collectStream(stream, kind) {
  let text = '';
  const chunks = [];
  for await (const chunk of stream) {
    chunks.push(chunk);
    for (const c of chunk.choices) text += kind === 'chat' ? (c.delta?.content ?? '') : c.text;
  }
  const final = chunks.findLast((c) => c.choices.length && c.choices[0].finish_reason);
  return { text, chunks, final };
}
