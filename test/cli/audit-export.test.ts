/**
 * `keyward audit export` (CONTRACT 4 and 9) as a real process on a real database: one JSON object a
 * line, oldest first, in the contract's shape (`actor` is `operator` for the CLI), narrowed by
 * --since and --until, only the account's own events; an unknown account is refused (exit 1) and a
 * malformed time is a usage error naming its flag (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedAuditEvent } from '../../src/services/audit/audit-export.js';
import { cliEnv, cliJson, newMasterKey, runCli } from '../helpers/cli-process.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const SLOW = 180_000;

/** A line as printed: the service's event, through JSON. */
type Line = ExportedAuditEvent;

describe.each(ENGINES)('audit export on %s', (engine) => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  let accountId: string;
  let serverId: string;
  let keyId: string;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    env = cliEnv({ KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey() });
    accountId = (await cliJson(env, ['account', 'create', '--name', 'Export Inc', '--email', 'ops@export.test'])).accountId as string;
    serverId = (await cliJson(env, ['server', 'create', '--account', accountId, '--name', 'Production'])).serverId as string;
    keyId = (await cliJson(env, ['key', 'create', '--account', accountId, '--label', 'Billing'])).keyId as string;
    await cliJson(env, ['key', 'revoke', '--key', keyId]);
    // Another account's change, which the export must not show.
    const other = (await cliJson(env, ['account', 'create', '--name', 'Other', '--email', 'ops@other.test'])).accountId as string;
    await cliJson(env, ['server', 'create', '--account', other, '--name', 'Not yours']);
  }, SLOW);
  afterAll(() => database?.drop());

  const exported = async (args: string[] = []) => {
    const run = await runCli(env, ['audit', 'export', '--account', accountId, ...args]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    return run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);
  };

  it('prints every event of the account, oldest first, one JSON object a line, in the contract’s shape', { timeout: SLOW }, async () => {
    const lines = await exported();
    expect(lines.map((l) => l.action)).toEqual(['server.created', 'account_key.created', 'account_key.revoked']);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(['action', 'actor', 'at', 'details', 'id', 'target']);
      expect(line.actor).toBe('operator');
      expect(line.id).toMatch(/^evt_[0-9a-f]{28}$/);
      expect(new Date(line.at).toISOString()).toBe(line.at);
    }
    expect(lines[0]).toMatchObject({ target: serverId, details: { name: 'Production', serverId } });
    expect(lines[1]).toMatchObject({ target: keyId, details: { label: 'Billing' } });
    expect([...lines.map((l) => l.at)].sort()).toEqual(lines.map((l) => l.at));
    // --json changes nothing: the lines are the format.
    const withJson = await runCli(env, ['audit', 'export', '--account', accountId, '--json']);
    expect(
      withJson.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as Line).id),
    ).toEqual(lines.map((l) => l.id));
  });

  it('narrows to --since (inclusive) and --until (exclusive)', { timeout: SLOW }, async () => {
    const all = await exported();
    const [first, second, third] = all as [Line, Line, Line];
    expect((await exported(['--since', second.at])).map((l) => l.id)).toEqual([second.id, third.id]);
    expect((await exported(['--until', second.at])).map((l) => l.id)).toEqual(all.filter((l) => l.at < second.at).map((l) => l.id));
    expect((await exported(['--since', '2999-01-01'])).length).toBe(0);
    expect((await exported(['--since', first.at.slice(0, 10)])).length).toBe(3);
  });

  it('refuses an unknown account (exit 1) and a malformed time (exit 2, naming the flag)', { timeout: SLOW }, async () => {
    const unknown = await runCli(env, ['audit', 'export', '--account', 'acct_00000000000000000000000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^keyward: no account acct_0+\n$/);
    for (const [flag, value] of [
      ['--since', 'yesterday'],
      ['--until', '2026-13-01'],
      ['--since', '2026-01-01T10:00:00+02:00'],
    ] as const) {
      const run = await runCli(env, ['audit', 'export', '--account', accountId, flag, value]);
      expect(run.code, `${flag} ${value}`).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(new RegExp(`^keyward: ${flag} must be a UTC time[^\\n]*\\n$`));
    }
  });
});
