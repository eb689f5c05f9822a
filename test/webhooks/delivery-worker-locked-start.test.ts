/**
 * The webhook dispatcher's thread (src/jobs/webhook-dispatch.ts) starts on an SQLite file whose write
 * lock another connection holds past the busy timeout (a long transaction of the CLI, say), and it
 * neither dies nor waits for that lock to start: serve's own openContext has migrated the database and
 * proven the key before starting it, so the thread's start takes no write lock, only reads. No restart
 * is logged while the lock is held or after; once the lock is given back, the message written before
 * is sent, signed, and recorded delivered within a few seconds, and stop() ends the thread.
 *
 * SQLite only: a transaction in another connection holding the file's one write lock is its case
 * (PostgreSQL locks rows, not the database). The lock is held with BEGIN IMMEDIATE on a connection of
 * this test's own, on the test's thread; the dispatcher's thread waits on it alone.
 */
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The built module, as serve runs it: its worker is the compiled webhook-dispatch-worker.js beside it
// (from src/, the worker would be the .ts source, which plain Node cannot run: see WORKER_FILE).
import { startWebhookDispatch, type WebhookDispatch } from '../../dist/jobs/webhook-dispatch.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/primitives/logger.js';
import { startWithTenant, type Tenant, type TestApp, TestClock } from '../helpers/test-app.js';
import { deliveryOf, until } from '../helpers/webhook-delivery.js';
import { delivered, type Subscriber, subscribe } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';

const SLOW = 120_000;
const RESTART_LINE = 'the webhook dispatcher thread ended unexpectedly; it starts again shortly (the messages stay due)';
/** Longer than the store's busy timeout (5 s, store/open.ts): a start that needs the write lock gives up before it is free. */
const HOLD_MS = 6000;
/** How long after the lock is given back a restart would still show: a thread that died at 5 s is logged by then. */
const WATCH_AFTER_MS = 3000;

interface LogLine {
  level: number;
  msg: string;
  err?: { message: string };
}

describe('the webhook dispatcher thread, started while another connection holds the SQLite write lock', () => {
  let t: TestApp;
  let tenant: Tenant;
  let s: Subscriber | undefined;
  let other: BetterSqlite3.Database | undefined;
  let dispatch: WebhookDispatch | undefined;

  beforeAll(async () => {
    ({ t, tenant } = await startWithTenant('sqlite'));
  }, SLOW);

  afterAll(async () => {
    if (other?.inTransaction) other.exec('ROLLBACK');
    other?.close();
    await dispatch?.stop().catch(() => undefined);
    await s?.close();
    await t?.close();
  }, SLOW);

  it('neither dies nor waits for the lock at start, and delivers once the lock is free', { timeout: SLOW }, async () => {
    s = await subscribe(t, tenant.serverId);
    const [messageId] = await writeEvent(t, tenant.serverId, 'u_locked');

    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const logged = () => lines.map((line) => JSON.parse(line) as LogLine);
    const restarts = () => logged().filter((line) => line.msg === RESTART_LINE);

    // The write lock, taken before the thread starts and held past the busy timeout. better-sqlite3 is
    // synchronous, but BEGIN IMMEDIATE returns at once: the test's event loop runs on while it is held.
    other = new BetterSqlite3(t.database.file!);
    other.exec('BEGIN IMMEDIATE');
    const heldAt = Date.now();

    // The same context object; its type is declared twice (src/ and dist/), and TypeScript holds the
    // two apart by their classes' protected members. The main thread reads only ctx.observer (none here).
    const mainCtx = t.ctx as unknown as Parameters<typeof startWebhookDispatch>[0];
    const env = { KEYWARD_DATABASE_URL: t.database.url, KEYWARD_MASTER_KEY: t.masterKey.toString('base64'), KEYWARD_ALLOW_PRIVATE_URLS: 'true' };
    dispatch = startWebhookDispatch(mainCtx, loadConfig(env), createLogger('info', sink));

    // The lock is held for its whole time: nothing can be claimed, and the thread must not end.
    await sleep(HOLD_MS - (Date.now() - heldAt));
    expect(other.inTransaction).toBe(true);
    expect(s.receiver.received).toEqual([]);
    expect(restarts()).toEqual([]);
    other.exec('COMMIT');
    const releasedAt = Date.now();

    // The thread that started under the lock sends the waiting message once it is free.
    const [webhook] = await s.receiver.waitFor(1, 15_000);
    expect(webhook!.headers['webhook-id']).toBe(messageId);
    expect(delivered({ clock: new TestClock() }, s.secret, webhook!)).toMatchObject({
      messageId,
      type: 'connect.failed',
      data: { externalUserId: 'u_locked' },
    });
    await until(async () => (await deliveryOf(t.ctx, s!.webhookId, messageId!)).status === 'delivered', 'the delivery to be recorded', 15_000);
    expect(webhook!.receivedAt - releasedAt).toBeLessThan(5000);

    // Still no restart a while after the release (one that died at start would be logged by now).
    await sleep(Math.max(0, WATCH_AFTER_MS - (Date.now() - releasedAt)));
    expect(restarts()).toEqual([]);
    expect(logged().filter((line) => line.level >= 50)).toEqual([]);

    await expect(dispatch.stop()).resolves.toBeUndefined();
    dispatch = undefined;
    expect(restarts()).toEqual([]);
    expect(s.receiver.received).toHaveLength(1);
  });
});
