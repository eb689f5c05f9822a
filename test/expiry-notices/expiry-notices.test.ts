/**
 * The expiry notices (CONTRACT 10, last paragraph; services/expiry-notices/), on both engines: an OAuth
 * flow, hosted form or connect session nobody finished sends one `connect.failed` with
 * `error: "expired"` and its id, delivered to a real receiver and verified by the standardwebhooks
 * package, and valid against the schema the OpenAPI document publishes; never one for what was
 * finished, never two for one row (runs repeated, runs under different leases, three nodes at once),
 * never both "connected" and "expired"; and what the end user's browser meets after the notice.
 *
 * Each test starts its own Keyward: a run picks every expired row of the database. The TestClock
 * stands still unless moved, and a run is called as serve's schedule calls it.
 */
import { Ajv } from 'ajv';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StaticProvider } from '../../src/catalog/provider-definition.js';
import { RUN_INTERVAL_MS, scheduleExpiryNotices } from '../../src/jobs/expiry-notices-schedule.js';
import { connectStaticOnPage } from '../../src/services/connect-sessions/connect-page-actions.js';
import { openConnectSession } from '../../src/services/connect-sessions/connect-sessions.js';
import type { ServiceContext } from '../../src/services/context.js';
import { CONNECT_SESSIONS, type ExpiringKind, OAUTH_FLOWS, STATIC_FORM_SESSIONS } from '../../src/services/expiry-notices/expiring-kinds.js';
import {
  BATCH_SIZE,
  BATCHES_PER_RUN,
  type ExpiryNoticeOptions,
  type ExpiryNoticeReport,
  type KindReport,
  NOTICE_WINDOW_SECONDS,
  runExpiryNotices,
} from '../../src/services/expiry-notices/expiry-notices.js';
import { verifierAad } from '../../src/services/oauth/oauth-flows.js';
import { ENGINES } from '../helpers/databases.js';
import { connectStatic, openHostedForm, postHostedForm } from '../helpers/hosted-form.js';
import { addProviderLikeAcme } from '../helpers/oauth-credentials.js';
import { type OAuthTenant, PROVIDER, startOAuthTenant } from '../helpers/oauth-tenant.js';
import { leaked } from '../helpers/secret-scan.js';
import { catalogWithoutChecks, type SecondNode, startSecondNode } from '../helpers/test-app.js';
import { startTokenGate, type TokenGate } from '../helpers/token-gate.js';
import { until } from '../helpers/webhook-delivery.js';
import { eventTimestamp, outboxRows, type Subscriber, subscribe } from '../helpers/webhook-events.js';

const LIFETIME = 60;
const API_KEY = 'sk-proj-EXPIRYabcdefghijklmnopqrstuvwxyz';
const NONE: KindReport = { picked: 0, notified: 0, finished: 0, errors: 0 };
/** A run's report where each kind came to `reports` (NONE where not given). */
const ran = (reports: Partial<Record<'oauth_flows' | 'static_form_sessions' | 'connect_sessions', Partial<KindReport>>> = {}): ExpiryNoticeReport => ({
  oauth_flows: { ...NONE, ...reports.oauth_flows },
  static_form_sessions: { ...NONE, ...reports.static_form_sessions },
  connect_sessions: { ...NONE, ...reports.connect_sessions },
});
const ajv = new Ajv({ strict: false, allErrors: true });

describe.each(ENGINES)('expiry notices on %s', (engine) => {
  let o: OAuthTenant;
  let hooks: Subscriber;
  let gate: TokenGate | undefined;
  const nodes: SecondNode[] = [];
  beforeEach(async () => {
    o = await startOAuthTenant(engine);
    hooks = await subscribe(o.t, o.tenant.serverId);
  });
  afterEach(async () => {
    for (const node of nodes.splice(0)) await node.close();
    await gate?.close();
    gate = undefined;
    await hooks.close();
    await o.close();
  });

  const run = (options: ExpiryNoticeOptions = {}, ctx: ServiceContext = o.t.ctx) => runExpiryNotices(ctx, options);
  /** Moves every node's clock on together. */
  const advance = (seconds: number) => {
    o.t.clock.advance(seconds);
    for (const node of nodes) node.clock.advance(seconds);
  };
  const anotherNode = async () => {
    const node = await startSecondNode(o.t);
    nodes.push(node);
    return node;
  };

  /** An OAuth flow of `provider`, consented at the provider: its redirect back is not yet replayed. */
  const approvedFlow = async (externalUserId: string, provider = PROVIDER) => {
    const started = await o.t.app.inject({
      method: 'POST',
      url: `/v1/oauth/${provider}/start`,
      headers: o.headers,
      payload: { externalUserId, expiresIn: LIFETIME },
    });
    expect(started.statusCode, started.body).toBe(201);
    const flow = started.json() as { id: string; authorizationUrl: string };
    return { ...flow, back: await o.as.approve(flow.authorizationUrl) };
  };
  /** A hosted form of openai, opened in the end user's browser (its cookie and CSRF token kept). */
  const openedForm = async (externalUserId: string) => {
    const created = await o.t.app.inject({
      method: 'POST',
      url: '/v1/credentials/static/openai/connect',
      headers: o.headers,
      payload: { externalUserId, expiresIn: LIFETIME },
    });
    expect(created.statusCode, created.body).toBe(201);
    const form = created.json() as { id: string; url: string };
    const visit = await openHostedForm(o.t.app, form.url);
    expect(visit.status).toBe(200);
    return { id: form.id, visit };
  };
  const connectSession = async (externalUserId: string) => {
    const created = await o.t.app.inject({ method: 'POST', url: '/v1/connect-sessions', headers: o.headers, payload: { externalUserId, expiresIn: LIFETIME } });
    expect(created.statusCode, created.body).toBe(201);
    return created.json() as { id: string; url: string };
  };
  const flowRow = (id: string) => o.t.ctx.store.db.selectFrom('oauth_flows').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const credentialsOf = (externalUserId: string) =>
    o.t.ctx.store.db
      .selectFrom('credentials as c')
      .innerJoin('audience_members as m', 'm.id', 'c.member_id')
      .select('c.id')
      .where('m.external_user_id', '=', externalUserId)
      .execute();

  /** connect.failed "expired" as the contract writes it: `idField` names the row; a session names no provider. */
  const expiredEvent = (externalUserId: string, idField: 'flowId' | 'sessionId', id: string, provider: string | null) => ({
    messageId: expect.stringMatching(/^msg_[0-9a-f]{28}$/),
    type: 'connect.failed',
    timestamp: eventTimestamp(o.t.clock.now()),
    data: {
      serverId: o.tenant.serverId,
      externalUserId,
      // The member's profile, as every event about a member carries it (none set here).
      endUser: { displayName: null, email: null, tags: {} },
      ...(provider === null ? {} : { provider }),
      [idField]: id,
      error: 'expired',
    },
  });
  /** Each delivered event of `type`, checked against the schema GET /openapi.json publishes for it. */
  const matchesPublishedSchema = async (event: { type: string; timestamp: string; data: Record<string, unknown> }) => {
    const doc = (await o.t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const ref: string = doc.webhooks[event.type].post.requestBody.content['application/json'].schema.$ref;
    const validate = ajv.compile(doc.components.schemas[ref.split('/').pop()!]);
    const { type, timestamp, data } = event;
    expect(validate({ type, timestamp, data }), ajv.errorsText(validate.errors)).toBe(true);
  };

  it('an OAuth flow nobody finished: one connect.failed "expired" with its flowId, nothing secret, and its callback then answers the expired page', async () => {
    const flow = await approvedFlow('u_flow');
    advance(LIFETIME - 1);
    expect(await run()).toEqual(ran());
    advance(1); // now exactly its expiry: expired
    expect(await run()).toEqual(ran({ oauth_flows: { picked: 1, notified: 1 } }));

    const events = await hooks.events('u_flow');
    expect(events).toEqual([expiredEvent('u_flow', 'flowId', flow.id, PROVIDER)]);
    await matchesPublishedSchema(events[0]!);
    expect(await flowRow(flow.id)).toMatchObject({ status: 'failed', error_code: 'expired' });

    // Nothing secret in what was sent: not the state, the code, the PKCE verifier, a key or the client secret.
    const row = await flowRow(flow.id);
    const secrets = [
      new URL(flow.authorizationUrl).searchParams.get('state')!,
      flow.back.searchParams.get('code')!,
      o.t.ctx.vault.open(row.verifier, verifierAad(flow.id, o.tenant.serverId)),
      o.tenant.accountKey,
      o.tenant.serverKey,
      o.as.clients.basic.secret,
    ];
    const sent = (await outboxRows(o.t.ctx, 'u_flow')).map((r) => r.payload).join('\n') + JSON.stringify(hooks.receiver.received);
    expect(leaked(sent, secrets)).toEqual([]);

    // The end user comes back from the provider: the expired page as before, no exchange, nothing stored.
    const exchanges = o.as.tokenRequests.authorization_code;
    const callback = await o.callback(flow.back);
    expect(callback.statusCode).toBe(410);
    expect(callback.body).toContain('Sign-in link expired');
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges);
    expect(await credentialsOf('u_flow')).toEqual([]);

    // Run again, and again later: still one event.
    expect(await run()).toEqual(ran());
    advance(RUN_INTERVAL_MS / 1000);
    expect(await run()).toEqual(ran());
    expect(await hooks.events('u_flow')).toHaveLength(1);
  });

  it('a hosted form nobody finished: one connect.failed "expired" with its sessionId, and the form then answers 410 and stores nothing', async () => {
    const form = await openedForm('u_form');
    advance(LIFETIME);
    expect(await run()).toEqual(ran({ static_form_sessions: { picked: 1, notified: 1 } }));
    const events = await hooks.events('u_form');
    expect(events).toEqual([expiredEvent('u_form', 'sessionId', form.id, 'openai')]);
    expect(form.id).toMatch(/^cfs_/);
    await matchesPublishedSchema(events[0]!);

    const posted = await postHostedForm(o.t.app, form.visit, { apiKey: API_KEY });
    expect(posted.statusCode).toBe(410);
    expect((await o.t.app.inject({ method: 'GET', url: form.visit.path })).statusCode).toBe(410);
    expect(await credentialsOf('u_form')).toEqual([]);
    expect(leaked((await outboxRows(o.t.ctx)).map((r) => r.payload).join('\n'), [form.visit.path.split('/').pop()!, form.visit.csrf])).toEqual([]);

    expect(await run()).toEqual(ran());
    expect(await hooks.events('u_form')).toHaveLength(1);
  });

  it('a connect session nobody connected through: one connect.failed "expired" with its csn_ sessionId and no provider; none for a session used', async () => {
    const idle = await connectSession('u_idle');
    const used = await connectSession('u_used');
    const opened = await openConnectSession(o.t.ctx, used.url.split('/').pop()!);
    if (opened.state !== 'open') throw new Error(`the session is ${opened.state}`);
    await connectStaticOnPage(o.t.ctx, opened.session, catalogWithoutChecks('openai') as StaticProvider, { apiKey: API_KEY });
    advance(LIFETIME);
    expect(await run()).toEqual(ran({ connect_sessions: { picked: 1, notified: 1 } }));

    const events = await hooks.events('u_idle');
    expect(events).toEqual([expiredEvent('u_idle', 'sessionId', idle.id, null)]);
    expect(idle.id).toMatch(/^csn_/);
    await matchesPublishedSchema(events[0]!);
    expect((await hooks.events('u_used')).map((e) => e.type)).toEqual(['credential.connected']);
    expect(await run()).toEqual(ran());
    expect(await hooks.events('u_idle')).toHaveLength(1);
  });

  it('nothing for a flow completed, a form used or a flow cancelled before their expiry, nor for an expiry older than the window', async () => {
    const { flowId } = await o.connect('u_done');
    await connectStatic(o.t.app, o.headers, { externalUserId: 'u_done', values: { apiKey: API_KEY } });
    // A flow of a member who is then revoked: cancelled with the revocation (CONTRACT 2.7).
    const cancelled = await approvedFlow('u_done');
    expect((await o.t.app.inject({ method: 'DELETE', url: '/v1/end-users/u_done', headers: o.headers })).statusCode).toBe(200);
    expect((await flowRow(cancelled.id)).status).toBe('cancelled');
    // A flow that expired more than the window ago, while no node ran (an outage, an upgrade).
    const old = await approvedFlow('u_old');
    advance(LIFETIME + NOTICE_WINDOW_SECONDS + 1);
    // The default lifetimes (600 s a flow, 1800 s a form) are well past too.
    expect(await run()).toEqual(ran());
    expect((await hooks.events('u_done')).map((e) => e.type).sort()).toEqual([
      'credential.connected',
      'credential.connected',
      'credential.revoked',
      'credential.revoked',
    ]);
    expect(await hooks.events('u_old')).toEqual([]);
    expect((await flowRow(flowId)).status).toBe('completed');
    // That old flow ends as before the notices existed, when its callback comes.
    expect((await o.callback(old.back)).statusCode).toBe(410);
    expect((await hooks.events('u_old')).map((e) => e.data.error)).toEqual(['flow_expired']);
  });

  it('a callback whose code is being swapped when its flow expires ends connected, never also expired', async () => {
    gate = await startTokenGate(o.as.tokenUrl);
    await addProviderLikeAcme(o, 'slow', { tokenUrl: gate.url });
    const flow = await approvedFlow('u_race', 'slow');
    gate.hold = true;
    const callback = o.callback(flow.back);
    await until(() => gate!.arrived === 1, 'the exchange to reach the provider');
    advance(LIFETIME);
    expect(await run()).toEqual(ran());
    gate.release();
    expect((await callback).statusCode).toBe(200);
    expect(await run()).toEqual(ran());
    expect((await hooks.events('u_race')).map((e) => e.type)).toEqual(['credential.connected']);
  });

  it('a flow and a form notified by a node whose clock is ahead cannot be finished on a node whose clock is behind', async () => {
    const flow = await approvedFlow('u_skew');
    const form = await openedForm('u_skew');
    const behind = await anotherNode();
    o.t.clock.advance(LIFETIME); // this node only: the other is a minute behind, before both expiries
    expect(await run()).toEqual(ran({ oauth_flows: { picked: 1, notified: 1 }, static_form_sessions: { picked: 1, notified: 1 } }));

    const exchanges = o.as.tokenRequests.authorization_code;
    const callback = await behind.app.inject({ method: 'GET', url: `${flow.back.pathname}${flow.back.search}` });
    expect(callback.statusCode).toBe(410);
    expect(callback.body).toContain('Sign-in link expired');
    expect(o.as.tokenRequests.authorization_code).toBe(exchanges);
    // The behind node's clock says the form is still open, but it ended: it is not taken.
    expect((await postHostedForm(behind.app, form.visit, { apiKey: API_KEY })).statusCode).toBe(410);
    expect(await credentialsOf('u_skew')).toEqual([]);
    const events = await hooks.events('u_skew');
    expect(events.map((e) => [e.type, e.data.error, e.data.flowId ?? e.data.sessionId]).sort()).toEqual(
      [
        ['connect.failed', 'expired', flow.id],
        ['connect.failed', 'expired', form.id],
      ].sort(),
    );
  });

  it('the guarded mark, not the lease, makes a notice single: two runs under two leases at once notify each row once', async () => {
    const flows: { id: string }[] = [];
    const forms: { id: string }[] = [];
    for (let i = 0; i < 6; i++) {
      flows.push(await approvedFlow(`u_pair_${i}`));
      forms.push(await openedForm(`u_pair_${i}`));
    }
    // SQLite has one node (one writer): there the two runs share it.
    const second = engine === 'postgres' ? (await anotherNode()).ctx : o.t.ctx;
    advance(LIFETIME);
    // As if one node's lease ran out mid-run and another took the kind: the same rows, two runs.
    const renamed = (kind: ExpiringKind): ExpiringKind => ({ ...kind, name: `${kind.name}-elsewhere` });
    const limits = { batchSize: 2, concurrency: 2 };
    const [first, other] = await Promise.all([
      run({ kinds: [OAUTH_FLOWS, STATIC_FORM_SESSIONS], limits }),
      run({ kinds: [renamed(OAUTH_FLOWS), renamed(STATIC_FORM_SESSIONS)], limits }, second),
    ]);
    const notified = (kind: string) => first[kind]!.notified + other[`${kind}-elsewhere`]!.notified;
    expect([notified('oauth_flows'), notified('static_form_sessions')]).toEqual([6, 6]);
    for (const report of [...Object.values(first), ...Object.values(other)]) expect(report!.errors).toBe(0);

    const events = await hooks.events();
    const ids = events.map((e) => e.data.flowId ?? e.data.sessionId).sort();
    expect(ids).toEqual([...flows.map((f) => f.id), ...forms.map((f) => f.id)].sort());
    expect(events.every((e) => e.type === 'connect.failed' && e.data.error === 'expired')).toBe(true);
  });

  it('takes at most batches × batch size rows of a kind a run, oldest expiry first, and the next run goes on', async () => {
    // The production figures notify 5,000 rows of each kind every 30 s.
    expect(BATCHES_PER_RUN * BATCH_SIZE * (60_000 / RUN_INTERVAL_MS)).toBeGreaterThanOrEqual(10_000);
    const flows: { id: string }[] = [];
    for (let i = 0; i < 5; i++) {
      flows.push(await approvedFlow(`u_batch_${i}`));
      advance(1);
    }
    advance(LIFETIME);
    const limits = { batchSize: 2, batches: 2, concurrency: 1 };
    expect(await run({ limits })).toEqual(ran({ oauth_flows: { picked: 4, notified: 4 } }));
    const statuses = async () => Promise.all(flows.map(async (f) => (await flowRow(f.id)).status));
    expect(await statuses()).toEqual(['failed', 'failed', 'failed', 'failed', 'pending']);
    expect(await run({ limits })).toEqual(ran({ oauth_flows: { picked: 1, notified: 1 } }));
    expect(await statuses()).toEqual(['failed', 'failed', 'failed', 'failed', 'failed']);
    expect((await hooks.events()).map((e) => e.data.flowId).sort()).toEqual(flows.map((f) => f.id).sort());
  });

  it('runs on the schedule serve starts, soon after start, and logs what it did', async () => {
    const flow = await approvedFlow('u_scheduled');
    advance(LIFETIME);
    const schedule = scheduleExpiryNotices(o.t.ctx, { firstRunDelayMs: 0 }, o.t.app.log as unknown as Logger);
    try {
      await until(() => o.t.logs.some((line) => line.includes('expiry notices ran')), 'the scheduled run to be logged');
    } finally {
      await schedule.stop();
    }
    expect((await flowRow(flow.id)).status).toBe('failed');
    const line = JSON.parse(o.t.logs.find((l) => l.includes('expiry notices ran'))!);
    expect(line.expiryNotices).toEqual(ran({ oauth_flows: { picked: 1, notified: 1 } }));
    expect(await hooks.events('u_scheduled')).toEqual([expiredEvent('u_scheduled', 'flowId', flow.id, PROVIDER)]);
  });

  // The leases are in the database: three nodes on one PostgreSQL.
  if (engine === 'postgres') {
    it('three nodes running at once notify each expired flow, form and session once, each kind from one node', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push((await approvedFlow(`u_three_${i}`)).id);
        ids.push((await openedForm(`u_three_${i}`)).id);
        ids.push((await connectSession(`u_three_${i}`)).id);
      }
      const others = [await anotherNode(), await anotherNode()];
      advance(LIFETIME);
      const limits = { batchSize: 1, concurrency: 1 };
      const reports = await Promise.all([o.t.ctx, ...others.map((n) => n.ctx)].map((ctx) => run({ limits }, ctx)));
      for (const kind of [OAUTH_FLOWS, STATIC_FORM_SESSIONS, CONNECT_SESSIONS]) {
        const notified = reports.map((report) => report[kind.name]?.notified ?? 0);
        expect(
          notified.reduce((a, b) => a + b),
          kind.name,
        ).toBe(4);
        // One node did the kind's work; another found the lease taken (null) or, once released, nothing left.
        expect(
          notified.filter((n) => n > 0),
          kind.name,
        ).toEqual([4]);
      }
      const events = await hooks.events();
      expect(events.map((e) => e.data.flowId ?? e.data.sessionId).sort()).toEqual([...ids].sort());
      // Once more on every node: nothing left.
      for (const ctx of [o.t.ctx, ...others.map((n) => n.ctx)]) expect(await run({}, ctx)).toEqual(ran());
      expect(await hooks.events()).toHaveLength(ids.length);
    });
  }
});
