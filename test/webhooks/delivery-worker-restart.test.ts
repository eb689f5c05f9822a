/**
 * The webhook dispatcher's thread (src/jobs/webhook-dispatch.ts) is started again after it dies, and
 * then delivers: started while its PostgreSQL server is down, the worker fails at start and ends; the
 * main thread logs why, with the pause before the next start (1 s, then 2 s: doubled at each death of a
 * short life, so a database that stays away costs no tight loop), and starts it again. Once the server
 * is back, the message written before it went away is sent, signed, and recorded delivered; stop() then
 * ends it without another restart.
 *
 * PostgreSQL only: it is the engine whose database can really become unreachable (an SQLite file
 * cannot be taken away this way). The server is one of this test's own, not the one the other test
 * files share, since stopping it would break them. The event is written before the server stops: the
 * message then waits in the outbox through the worker's deaths, as messages do in production.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The built module, as serve runs it: its worker is the compiled webhook-dispatch-worker.js beside it
// (from src/, the worker would be the .ts source, which plain Node cannot run: see WORKER_FILE).
import { startWebhookDispatch, type WebhookDispatch } from '../../dist/jobs/webhook-dispatch.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/primitives/logger.js';
import { openContext } from '../../src/runtime.js';
import { CLI_ACTOR, type ServiceContext } from '../../src/services/context.js';
import { addWebhookEndpoint } from '../../src/services/webhooks/webhook-endpoints.js';
import { newMasterKey } from '../helpers/cli-process.js';
import { createPostgresDatabase, type EmbeddedPostgresServer, startEmbeddedPostgres } from '../helpers/embedded-postgres.js';
import { createTenant, type Tenant, TestClock } from '../helpers/test-app.js';
import { deliveryOf, until } from '../helpers/webhook-delivery.js';
import { delivered } from '../helpers/webhook-events.js';
import { writeEvent } from '../helpers/webhook-history.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const SLOW = 120_000;
const RESTART_LINE = 'the webhook dispatcher thread ended unexpectedly; it starts again shortly (the messages stay due)';
/** Why the worker's start failed, as the store words it: the reason's code, never the host, port or password. */
const UNREACHABLE = /^the database cannot be reached \((ECONNREFUSED|57P0[123]|08\w{3})\)$/;

interface RestartLine {
  level: number;
  time: number;
  msg: string;
  exitCode: number;
  restartInMs: number;
  err?: { message: string };
}

describe('the webhook dispatcher thread, started while its PostgreSQL server is down', () => {
  let server: EmbeddedPostgresServer;
  let env: Record<string, string>;
  let ctx: ServiceContext;
  let tenant: Tenant;
  let receiver: WebhookReceiver | undefined;
  let dispatch: WebhookDispatch | undefined;

  beforeAll(async () => {
    server = await startEmbeddedPostgres();
    const { url } = await createPostgresDatabase(server.adminUrl, 'keyward_worker_restart');
    env = { KEYWARD_DATABASE_URL: url, KEYWARD_MASTER_KEY: newMasterKey(), KEYWARD_ALLOW_PRIVATE_URLS: 'true' };
    ({ ctx } = await openContext(loadConfig(env)));
    tenant = await createTenant(ctx);
  }, SLOW);

  afterAll(async () => {
    await dispatch?.stop().catch(() => undefined);
    await receiver?.close();
    await ctx?.store.close();
    await ctx?.outbound.close();
    await server?.stop();
  }, SLOW);

  it('is started again after each death, 1 s then 2 s later, and delivers once the server is back', { timeout: SLOW }, async () => {
    receiver = await startWebhookReceiver();
    const { webhookId, secret } = await addWebhookEndpoint(ctx, { serverId: tenant.serverId, url: receiver.url, actor: CLI_ACTOR });
    const [messageId] = await writeEvent({ ctx, clock: new TestClock() }, tenant.serverId, 'u_restart');

    await server.halt();

    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const restarts = () => lines.map((line) => JSON.parse(line) as RestartLine).filter((line) => line.msg === RESTART_LINE);
    // The same context object; its type is declared twice (src/ and dist/), and TypeScript holds the
    // two apart by their classes' protected members. The main thread reads only ctx.observer (none here).
    const mainCtx = ctx as unknown as Parameters<typeof startWebhookDispatch>[0];
    dispatch = startWebhookDispatch(mainCtx, loadConfig(env), createLogger('info', sink));

    // Each start finds the server gone and the thread ends with that error; the pause doubles.
    await until(() => restarts().length >= 2, 'the worker to die twice', 20_000);
    const [first, second] = restarts();
    expect(first).toMatchObject({ level: 50, exitCode: 1, restartInMs: 1000, err: { message: expect.stringMatching(UNREACHABLE) } });
    expect(second).toMatchObject({ level: 50, exitCode: 1, restartInMs: 2000, err: { message: expect.stringMatching(UNREACHABLE) } });
    // The second death came from a new worker, started only once the first pause had passed.
    expect(second!.time - first!.time).toBeGreaterThanOrEqual(1000);
    expect(receiver.received).toEqual([]);

    await server.resume();
    const resumedAt = Date.now();

    // The next start (2 s after the second death, or 4 s after a third if the server was still coming up) delivers.
    const [webhook] = await receiver.waitFor(1, 30_000);
    expect(webhook!.headers['webhook-id']).toBe(messageId);
    expect(delivered({ clock: new TestClock() }, secret, webhook!)).toMatchObject({
      messageId,
      type: 'connect.failed',
      data: { externalUserId: 'u_restart' },
    });
    await until(async () => (await deliveryOf(ctx, webhookId, messageId!)).status === 'delivered', 'the delivery to be recorded');
    expect(webhook!.receivedAt - resumedAt).toBeLessThan(15_000);

    // Stopped on purpose: it ends, and is not started again.
    const deaths = restarts().length;
    await expect(dispatch.stop()).resolves.toBeUndefined();
    dispatch = undefined;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(restarts()).toHaveLength(deaths);
    expect(receiver.received).toHaveLength(1);
    const log = lines.join('\n');
    expect(log).not.toContain(env.KEYWARD_MASTER_KEY!);
    expect(log).not.toContain(`:${new URL(env.KEYWARD_DATABASE_URL!).port}`);
  });
});
