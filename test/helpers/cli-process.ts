/**
 * Runs `node bin/keyward.js …` as a real child process, the way an operator does: the CLI's commands
 * one at a time, and `serve` as a long-running service whose address is read from its log.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a CLI process: this one's, minus any Keyward setting of the machine, plus
 * `settings`. Private URLs are allowed unless told otherwise: the tests' providers listen on 127.0.0.1.
 * The background check of static credentials is off unless told: it would send the tests' made-up
 * keys to the catalog's real providers (an OpenAI key to api.openai.com).
 */
export function cliEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('KEYWARD_') && name !== 'NODE_OPTIONS') env[name] = value;
  }
  return { ...env, KEYWARD_ALLOW_PRIVATE_URLS: 'true', KEYWARD_VERIFY_HOURS: '0', ...settings };
}

export function newMasterKey(): string {
  return randomBytes(32).toString('base64');
}

/** Runs one command; its standard input is `input` (for a command that reads a secret), else empty. */
export function runCli(env: NodeJS.ProcessEnv, args: string[], input = ''): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['bin/keyward.js', ...args], { cwd: PROJECT_ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
    // A command that reads nothing may exit before taking its input: the pipe then closes early.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input);
  });
}

/** Runs a command with --json; it must succeed and print exactly one JSON object, and nothing on stderr. */
export async function cliJson(env: NodeJS.ProcessEnv, args: string[], input?: string): Promise<Record<string, unknown>> {
  const run = await runCli(env, [...args, '--json'], input);
  const what = `keyward ${args.join(' ')}`;
  expect(run.stderr, what).toBe('');
  expect(run.code, what).toBe(0);
  expect(run.stdout.endsWith('\n'), what).toBe(true);
  const lines = run.stdout.slice(0, -1).split('\n');
  expect(lines, what).toHaveLength(1);
  const value: unknown = JSON.parse(lines[0]!);
  expect(value !== null && typeof value === 'object' && !Array.isArray(value), what).toBe(true);
  return value as Record<string, unknown>;
}

export interface ServeProcess {
  child: ChildProcess;
  address: string;
  /** Every line the service wrote on stdout so far. */
  lines: string[];
  /** Sends SIGTERM and waits for the exit; rejects (after a SIGKILL) if it does not come in time. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** With `ipc`, the service is started with an IPC channel to this process, as fork() and cluster workers are. */
export async function startServe(env: NodeJS.ProcessEnv, timeoutMs = 60_000, args: string[] = [], { ipc = false } = {}): Promise<ServeProcess> {
  const stdio = ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'];
  const child = spawn(process.execPath, ['bin/keyward.js', 'serve', ...args], { cwd: PROJECT_ROOT, env, stdio: stdio as ('ignore' | 'pipe' | 'ipc')[] });
  const lines: string[] = [];
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), 15_000);
    });
    const result = await Promise.race([exited, late]);
    clearTimeout(timer);
    if (result) return result;
    child.kill('SIGKILL');
    throw new Error('keyward serve did not exit within 15 s of SIGTERM');
  };
  const address = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`keyward serve did not listen within ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        try {
          const entry = JSON.parse(line) as { msg?: string; address?: string };
          if (entry.msg === 'Keyward is listening' && entry.address) {
            clearTimeout(timer);
            resolve(entry.address);
          }
        } catch {
          // Not a log line: kept in `lines` for the test to see.
        }
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`keyward serve exited (${code ?? signal}) before listening: ${stderr}`));
    });
  }).catch(async (error: Error) => {
    await stop().catch(() => undefined);
    throw error;
  });
  return { child, address, lines, stop };
}

/** `provider add-oauth` with its required flags, for a custom provider at auth.acme.test (nothing is called there). */
export function addOAuthProviderArgs(serverId: string, slug: string): string[] {
  return [
    ...['provider', 'add-oauth', '--server', serverId, '--slug', slug],
    ...['--authorization-url', 'https://auth.acme.test/authorize', '--token-url', 'https://auth.acme.test/token'],
    ...['--client-id', 'c', '--client-secret', 's'],
  ];
}
