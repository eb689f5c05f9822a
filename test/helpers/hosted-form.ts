/** Drives the hosted static form over HTTP the way a browser would: GET, keep the cookie, POST. */
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { ServiceContext } from '../../src/services/context.js';

export interface FormVisit {
  path: string;
  status: number;
  html: string;
  cookie: string;
  csrf: string;
}

/** The path of a form URL the API returned (`http://keyward.test/connect/…` → `/connect/…`). */
export function formPath(url: string): string {
  return new URL(url).pathname;
}

export async function openHostedForm(app: FastifyInstance, url: string): Promise<FormVisit> {
  const path = formPath(url);
  const response = await app.inject({ method: 'GET', url: path });
  const setCookie = response.headers['set-cookie'];
  const cookie = (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(response.body)?.[1] ?? '';
  return { path, status: response.statusCode, html: response.body, cookie, csrf };
}

export function postHostedForm(app: FastifyInstance, visit: FormVisit, values: Record<string, string>, overrides: { csrf?: string; cookie?: string } = {}) {
  return app.inject({
    method: 'POST',
    url: visit.path,
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: overrides.cookie ?? visit.cookie },
    payload: new URLSearchParams({ csrf: overrides.csrf ?? visit.csrf, ...values }).toString(),
  });
}

/** Creates a form session through the API and completes it with the values: a stored static credential. */
export async function connectStatic(
  app: FastifyInstance,
  headers: Record<string, string>,
  input: { provider?: string; externalUserId: string; values: Record<string, string> },
): Promise<{ sessionId: string }> {
  const created = await app.inject({
    method: 'POST',
    url: `/v1/credentials/static/${input.provider ?? 'openai'}/connect`,
    headers,
    payload: { externalUserId: input.externalUserId },
  });
  if (created.statusCode !== 201) throw new Error(`connect answered ${created.statusCode}: ${created.body}`);
  const { id, url } = created.json() as { id: string; url: string };
  const visit = await openHostedForm(app, url);
  const posted = await postHostedForm(app, visit, input.values);
  if (posted.statusCode !== 200) throw new Error(`the form answered ${posted.statusCode}`);
  return { sessionId: id };
}

/**
 * Every row of every table, found by introspection so that a table added later counts too, sealed
 * bytes as hex: for "nothing stored changed" checks and secret scans.
 */
export async function snapshotTables(ctx: Pick<ServiceContext, 'store'>): Promise<Record<string, string[]>> {
  const tables = (await ctx.store.db.introspection.getTables()).map((t) => t.name).sort();
  const snapshot: Record<string, string[]> = {};
  for (const table of tables) {
    const rows = await ctx.store.db.selectFrom(sql.table(table).as('t')).selectAll().execute();
    snapshot[table] = rows.map((row) => JSON.stringify(row, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v))).sort();
  }
  return snapshot;
}
