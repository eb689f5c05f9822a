/**
 * Which node runs the sweeps (services/retention/sweeps.ts): on PostgreSQL one node at a time, a second one
 * skipping its run while the first sweeps; and `keyward serve` on its own, soon after it starts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addSeconds } from '../../src/primitives/clock.js';
import { runSweeps, type Sweep, standardSweeps } from '../../src/services/retention/sweeps.js';
import { cliEnv, startServe } from '../helpers/cli-process.js';
import { ENGINES } from '../helpers/databases.js';
import { startSecondNode, type TestApp } from '../helpers/test-app.js';
import { DAY, NOTHING_SWEPT, type SweepRows, startSweepRows } from './sweep-rows.js';

describe.each(ENGINES)('the nodes that sweep on %s', (engine) => {
  let t: TestApp;
  let db: SweepRows['db'];
  let ids: SweepRows['ids'];
  let copies: SweepRows['copies'];
  let baseRows: SweepRows['baseRows'];
  beforeEach(async () => {
    ({ t, db, ids, copies, baseRows } = await startSweepRows(engine));
  });
  afterEach(() => t.close());

  // The advisory lock is taken inside the run's transaction: a node that finds it taken skips its run.
  if (engine === 'postgres') {
    it('lets one node sweep at a time: a second node skips its run while the first one is sweeping', async () => {
      await baseRows();
      t.clock.advance(100 * DAY);
      const second = await startSecondNode(t);
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let entered!: () => void;
        const inside = new Promise<void>((resolve) => (entered = resolve));
        // A sweep of its own at the head of the first node's list keeps its run open until released.
        const holding: Sweep = {
          name: 'holding',
          sweep: async () => {
            entered();
            await held;
            return 0;
          },
        };
        const first = runSweeps(t.ctx, [holding, ...standardSweeps({ auditRetentionDays: null })]);
        await inside;
        second.clock.advance(100 * DAY);
        expect(await runSweeps(second.ctx, standardSweeps({ auditRetentionDays: null }))).toBeNull();
        release();
        expect(await first).toEqual({
          holding: 0,
          static_form_sessions: 1,
          oauth_flows: 1,
          connect_sessions: 1,
          dashboard_sessions: 1,
          server_keys: 1,
          idempotency_records: 1,
          dashboard_form_uses: 1,
          sign_in_attempts: 1,
          rate_limit_windows: 1,
          webhook_messages: 0,
          webhook_attempts: 1,
          webhook_secrets: 1,
        });
        // Once the first run has committed, the second node's next run goes ahead and finds nothing left.
        expect(await runSweeps(second.ctx, standardSweeps({ auditRetentionDays: null }))).toEqual(NOTHING_SWEPT);
      } finally {
        await second.close();
      }
    });
  }

  it('is run by keyward serve on its own, soon after it starts', async () => {
    await baseRows();
    const now = new Date(); // the service runs on the real clock
    const stale = await copies('idempotency_records', 'expires_at', [addSeconds(now, -1)]);
    const live = await db().selectFrom('idempotency_records').select('idempotency_key').where('idempotency_key', 'not in', stale).execute();
    const env = cliEnv({
      KEYWARD_DATABASE_URL: t.database.url,
      KEYWARD_MASTER_KEY: t.masterKey.toString('base64'),
      KEYWARD_PORT: '0',
      KEYWARD_HOST: '127.0.0.1',
    });
    const serve = await startServe(env);
    try {
      for (let waited = 0; (await ids('idempotency_records')).includes(stale[0]!) && waited < 15_000; waited += 100) await sleep(100);
      expect(await ids('idempotency_records')).toEqual(live.map((row) => String(row.idempotency_key)).sort());
    } finally {
      await serve.stop();
    }
    expect(serve.lines.some((line) => line.includes('"msg":"swept ended rows"'))).toBe(true);
  });
});
