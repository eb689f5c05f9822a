/**
 * `keyward user invite | list | role | remove` (CONTRACT 4 and 9) as real processes on both engines:
 * the exact JSON of each, the link printed once by `invite` and never by `list`, a bad --role as a
 * usage error (exit 2) naming the flag, and the operator, who may do anything else, refused the last
 * owner's demotion or removal (exit 1, the one line of the rule).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openContext } from '../../src/runtime.js';
import type { ServiceContext } from '../../src/services/context.js';
import { join } from '../../src/services/team/joining.js';
import { cliEnv, cliJson, newMasterKey, runCli } from '../helpers/cli-process.js';
import { createTestDatabase, ENGINES, type TestDatabase } from '../helpers/databases.js';

const SLOW = 180_000;
const PASSWORD = 'correct horse battery staple';
const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const LAST_OWNER = 'keyward: An account keeps at least one owner.\n';

describe.each(ENGINES)('user invite, list, role and remove on %s', (engine) => {
  let database: TestDatabase;
  let env: NodeJS.ProcessEnv;
  /** The service's own context on the same database, for what only a browser does (joining). */
  let ctx: ServiceContext;
  let accountId: string;
  let ownerId: string;
  beforeAll(async () => {
    database = await createTestDatabase(engine);
    const settings = { KEYWARD_DATABASE_URL: database.url, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_PUBLIC_URL: 'https://keyward.acme.example' };
    env = cliEnv(settings);
    const made = await cliJson(env, ['account', 'create', '--name', 'Acme', '--email', 'ops@acme.test']);
    accountId = made.accountId as string;
    ownerId = made.userId as string;
    ({ ctx } = await openContext(loadConfig(settings)));
  }, SLOW);
  afterAll(async () => {
    await ctx?.store.close();
    await database?.drop();
  });

  /** Joins with the link `invite` printed, as the invited person's browser would. */
  async function joinWith(url: string): Promise<string> {
    const joined = await join(ctx, { token: url.split('/').pop()!, password: PASSWORD, device: { userAgent: 'test', address: '127.0.0.1' } });
    if (!joined.joined) throw new Error(`could not join: ${joined.state}`);
    return joined.userId;
  }

  it('invites (the link printed once), lists users and pending invitations without it, and audits as the operator', { timeout: SLOW }, async () => {
    const invited = await cliJson(env, ['user', 'invite', '--account', accountId, '--email', 'Dev@Acme.test', '--role', 'developer']);
    expect(Object.keys(invited).sort()).toEqual(['expiresAt', 'invitationId', 'url']);
    expect(invited.invitationId).toMatch(/^inv_[0-9a-f]{28}$/);
    expect(invited.url).toMatch(/^https:\/\/keyward\.acme\.example\/dashboard\/join\/[A-Za-z0-9_-]{43}$/);
    expect(invited.expiresAt).toMatch(TIME);
    expect(Date.parse(invited.expiresAt as string) - Date.now()).toBeGreaterThan(7 * 86_400_000 - 120_000);
    expect(Date.parse(invited.expiresAt as string) - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    const token = (invited.url as string).split('/').pop()!;

    const listed = await cliJson(env, ['user', 'list', '--account', accountId]);
    expect(listed).toEqual({
      users: [{ id: ownerId, email: 'ops@acme.test', role: 'owner', createdAt: expect.stringMatching(TIME), lastSignInAt: null, mfa: false, sso: false }],
      invitations: [{ id: invited.invitationId, email: 'dev@acme.test', role: 'developer', expiresAt: invited.expiresAt }],
    });
    expect(JSON.stringify(listed)).not.toContain(token);

    // As text: the link once, with what it is; the list names each user and invitation on a line.
    const text = await runCli(env, ['user', 'invite', '--account', accountId, '--email', 'boss@acme.test', '--role', 'owner']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^Invitation inv_[0-9a-f]{28}, valid until \S+, single-use:\nhttps:\/\/keyward\.acme\.example\/dashboard\/join\/[A-Za-z0-9_-]{43}\n/,
    );
    expect(text.stderr).toBe('');
    const lines = (await runCli(env, ['user', 'list', '--account', accountId])).stdout.trim().split('\n');
    expect(lines).toEqual([
      `${ownerId}  ops@acme.test  owner  never signed in`,
      expect.stringMatching(/^inv_[0-9a-f]{28} {2}boss@acme\.test {2}owner {2}invited, until \S+$/),
      `${invited.invitationId}  dev@acme.test  developer  invited, until ${invited.expiresAt}`,
    ]);

    const events = await ctx.store.db.selectFrom('audit_events').selectAll().where('action', '=', 'user.invited').where('account_id', '=', accountId).execute();
    expect(events.map((e) => e.actor)).toEqual(['cli', 'cli']);
    expect(JSON.stringify(events)).not.toContain(token);
  });

  it('changes a role and removes a user, printing exactly the contract objects', { timeout: SLOW }, async () => {
    const { url } = (await cliJson(env, ['user', 'invite', '--account', accountId, '--email', 'mover@acme.test', '--role', 'viewer'])) as Record<
      string,
      string
    >;
    const userId = await joinWith(url!);

    expect(await cliJson(env, ['user', 'role', '--user', userId, '--role', 'admin'])).toEqual({ userId, role: 'admin' });
    const listed = (await cliJson(env, ['user', 'list', '--account', accountId])) as { users: { id: string; role: string; lastSignInAt: string | null }[] };
    expect(listed.users.find((u) => u.id === userId)).toMatchObject({ role: 'admin', lastSignInAt: expect.stringMatching(TIME) });

    const removed = await cliJson(env, ['user', 'remove', '--user', userId]);
    expect(Object.keys(removed).sort()).toEqual(['removedAt', 'userId']);
    expect(removed).toMatchObject({ userId, removedAt: expect.stringMatching(TIME) });
    expect(await ctx.store.db.selectFrom('account_users').select('id').where('id', '=', userId).execute()).toEqual([]);
    const again = await runCli(env, ['user', 'remove', '--user', userId, '--json']);
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: `keyward: no dashboard user ${userId}\n` });
  });

  it('refuses the last owner’s demotion and removal (exit 1), then allows it once another owner joined', { timeout: SLOW }, async () => {
    for (const args of [
      ['user', 'role', '--user', ownerId, '--role', 'admin', '--json'],
      ['user', 'remove', '--user', ownerId, '--json'],
    ]) {
      expect(await runCli(env, args)).toEqual({ code: 1, stdout: '', stderr: LAST_OWNER });
    }
    const owners = () => ctx.store.db.selectFrom('account_users').select('id').where('account_id', '=', accountId).where('role', '=', 'owner').execute();
    expect(await owners()).toEqual([{ id: ownerId }]);

    const { url } = (await cliJson(env, ['user', 'invite', '--account', accountId, '--email', 'heir@acme.test', '--role', 'owner'])) as Record<string, string>;
    const heir = await joinWith(url!);
    expect(await cliJson(env, ['user', 'role', '--user', ownerId, '--role', 'developer'])).toEqual({ userId: ownerId, role: 'developer' });
    expect(await runCli(env, ['user', 'remove', '--user', heir, '--json'])).toEqual({ code: 1, stdout: '', stderr: LAST_OWNER });
    expect(await owners()).toEqual([{ id: heir }]);
  });

  it('answers a bad --role as a usage error naming the flag, and a bad email or account as a refusal', { timeout: SLOW }, async () => {
    for (const args of [
      ['user', 'invite', '--account', accountId, '--email', 'x@acme.test', '--role', 'superuser'],
      ['user', 'role', '--user', ownerId, '--role', 'Owner'],
    ]) {
      const run = await runCli(env, [...args, '--json']);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^keyward: --role must be one of viewer, developer, admin, owner, got "[A-Za-z]+"\n$/);
    }
    expect(await runCli(env, ['user', 'invite', '--account', accountId, '--email', 'not-an-email', '--role', 'viewer', '--json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'keyward: the email address is not valid\n',
    });
    expect(await runCli(env, ['user', 'invite', '--account', accountId, '--email', 'ops@acme.test', '--role', 'viewer', '--json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'keyward: this account already has a user with the email ops@acme.test\n',
    });
    expect(await runCli(env, ['user', 'list', '--account', 'acct_unknown', '--json'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'keyward: no account acct_unknown\n',
    });
    // Nothing was stored by the refusals.
    const stored = await ctx.store.db.selectFrom('team_invitations').select('email').where('email', 'in', ['x@acme.test', 'not-an-email']).execute();
    expect(stored).toEqual([]);
  });
});
