/** For the master-key suites: a one-line start-up refusal, key ids. */
import { expect } from 'vitest';
import { masterKeyId } from '../../src/primitives/vault.js';
import type { CliRun } from './cli-process.js';

/** The key id (hex) a base64 master key is recorded under. */
export const keyIdOf = (key: string): string => masterKeyId(Buffer.from(key, 'base64')).toString('hex');

/** Refused as a configuration error: exit 1, nothing on stdout, exactly one line on stderr naming `variable`, no key in it. */
export function expectOneLineRefusal(run: CliRun, variable: string, keys: string[] = []): void {
  expect(run.code, run.stderr).toBe(1);
  expect(run.stdout).toBe('');
  expect(run.stderr.endsWith('\n')).toBe(true);
  expect(run.stderr.slice(0, -1).split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(new RegExp(`^keyward: ${variable}: `));
  for (const key of keys) expect(run.stderr).not.toContain(key);
}
