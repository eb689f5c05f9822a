/**
 * `keyward serve` writes lines a person can read when its stdout is a terminal, and JSON lines when it
 * is a pipe or a file (a service's log). The terminal is a real pseudo-terminal: util-linux's
 * `script` runs serve on one and copies what it shows to our pipe.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, newMasterKey, PROJECT_ROOT, startServe } from '../helpers/cli-process.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's escape sequences are what this strips.
const ESCAPES = /\x1b\[[0-9;]*[A-Za-z]|\x1b\][^\x07]*\x07/g;
const dirs: string[] = [];

function serveEnv(): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'keyward-logs-'));
  dirs.push(dir);
  return cliEnv({ KEYWARD_DATABASE_URL: `sqlite:${join(dir, 'keyward.db')}`, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PORT: '0' });
}

/** Waits until some line passes `test`, or fails after `ms` showing every line seen. */
async function lineWhere(lines: string[], test: (line: string) => boolean, ms = 60_000): Promise<string> {
  for (let waited = 0; waited < ms; waited += 50) {
    const found = lines.find(test);
    if (found !== undefined) return found;
    await sleep(50);
  }
  throw new Error(`no such line within ${ms} ms:\n${lines.join('\n')}`);
}

/** serve on a pseudo-terminal; `lines` are what the terminal showed, colours and cursor moves removed. */
function serveOnTerminal(env: NodeJS.ProcessEnv) {
  const command = `exec '${process.execPath}' bin/keyward.js serve`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split(/\r?\n/);
    partial = parts.pop()!;
    lines.push(...parts.map((line) => line.replace(ESCAPES, '').replace(/\r/g, '')));
  });
  child.stdout.on('end', () => {
    if (partial) lines.push(partial.replace(ESCAPES, '').replace(/\r/g, ''));
  });
  // 'close', not 'exit': every line the terminal showed has been read by then.
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  // SIGTERM goes to serve itself (script's child: the shell exec'd it), as a process manager would send
  // it; script, told first, would stop copying the terminal before serve's last lines. script then
  // exits with serve's status.
  const stop = async () => {
    const served = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    expect(served).toHaveLength(1);
    process.kill(served[0]!, 'SIGTERM');
    return exited;
  };
  return { lines, stop };
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('serve logs', () => {
  it('prints readable lines on a terminal: time, level, message, then the fields on the same line', async () => {
    const serve = serveOnTerminal(serveEnv());
    try {
      const listening = await lineWhere(serve.lines, (line) => line.includes('Keyward is listening'));
      expect(listening).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Keyward is listening \{"address":"http:\/\/127\.0\.0\.1:\d+",/);
      const address = /"address":"([^"]+)"/.exec(listening)![1];
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
      const request = await lineWhere(serve.lines, (line) => line.includes('INFO: request'));
      expect(request).toMatch(/^\[[\d:.]+\] INFO: request \{.*"method":"GET","route":"\/healthz","statusCode":200,/);
      // Nothing on the terminal is a JSON line, and the lines drop what a person does not need.
      for (const line of serve.lines.filter(Boolean)) {
        expect(line.startsWith('{'), line).toBe(false);
        expect(line).not.toMatch(/"(pid|hostname|service)":/);
      }
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    expect(
      serve.lines.some((line) => /INFO: stopping \{"signal":"SIGTERM"\}/.test(line)),
      serve.lines.join('\n'),
    ).toBe(true);
  });

  it('prints JSON lines, as a service log, when stdout is not a terminal', async () => {
    const serve = await startServe(serveEnv());
    try {
      expect((await fetch(`${serve.address}/healthz`)).status).toBe(200);
      // Buffered lines are flushed every second.
      await lineWhere(serve.lines, (line) => line.includes('"msg":"request"'), 5000);
      expect(serve.lines.length).toBeGreaterThan(1);
      for (const line of serve.lines) {
        const entry = JSON.parse(line) as Record<string, unknown>;
        expect(entry).toMatchObject({ service: 'keyward', level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
      }
      expect(serve.lines.map((line) => JSON.parse(line).msg)).toContain('Keyward is listening');
    } finally {
      await serve.stop();
    }
  });
});
