/**
 * A user's browser, played over app.inject for the dashboard tests that need no real browser:
 * keeps the cookies it is given, and reads each page's CSRF token from its forms.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/store/schema.js';

export class DashboardClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly app: FastifyInstance) {}

  get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  #keep(response: LightMyRequestResponse) {
    for (const c of response.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }

  async get(url: string): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({ method: 'GET', url, headers: { cookie: this.cookieHeader } });
    this.#keep(response);
    return response;
  }

  /** Posts a form as the browser would: form-encoded, with the cookies. */
  async post(url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    const response = await this.app.inject({
      method: 'POST',
      url,
      headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    });
    this.#keep(response);
    return response;
  }

  /**
   * GETs a page and posts one of its forms (the one whose action is `action`) with its own hidden
   * fields: the CSRF token, and the one-time nonce of a form that creates something.
   */
  async submit(pageUrl: string, action: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
    const page = await this.get(pageUrl);
    return this.post(action, { ...hiddenFieldsOf(page.body, action), ...fields });
  }
}

/** The CSRF token the page's forms carry. */
export function csrfOf(body: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(body);
  if (!match) throw new Error(`no CSRF field on the page: ${body.slice(0, 200)}`);
  return match[1]!;
}

/**
 * The hidden fields of the page's form whose action is `action` (its CSRF token, and its one-time
 * nonce if it creates something); only the CSRF token when the page has no such form.
 */
export function hiddenFieldsOf(body: string, action: string): Record<string, string> {
  const escaped = action.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
  const form = new RegExp(`<form[^>]*action="${escaped}"[^>]*>([\\s\\S]*?)</form>`).exec(body);
  if (!form) return { csrf: csrfOf(body) };
  const fields: Record<string, string> = {};
  for (const [, name, value] of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name!] = value!;
  return fields;
}

/**
 * Signs a new user up (a new account), then in, as a person does (sign-up answers "Sign in"
 * whether or not it made an account), and returns the signed-in client.
 */
export async function signUpUser(app: FastifyInstance, input: { accountName?: string; email: string; password?: string }): Promise<DashboardClient> {
  const client = new DashboardClient(app);
  const password = input.password ?? 'correct horse battery staple';
  const response = await client.submit('/dashboard/sign-up', '/dashboard/sign-up', { accountName: input.accountName ?? 'Acme', email: input.email, password });
  if (response.statusCode !== 303 || response.headers.location !== '/dashboard/sign-in?notice=signed-up') {
    throw new Error(`sign-up answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  }
  const signedIn = await client.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: input.email, password });
  if (signedIn.statusCode !== 303) throw new Error(`sign-in after sign-up answered ${signedIn.statusCode}: ${signedIn.body.slice(0, 300)}`);
  return client;
}

/**
 * The page's text as a reader sees it: tags dropped (or, with ' ', turned into spaces, for tables
 * whose cells would otherwise run together), the template's escapes undone, spaces folded.
 */
export function visible(body: string, tagsAs: '' | ' ' = ''): string {
  return body
    .replace(/<[^>]+>/g, tagsAs)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ');
}

/** The user row (and its account) of a signed-up email. */
export async function userByEmail(db: Kysely<Database>, email: string): Promise<{ id: string; account_id: string }> {
  return db.selectFrom('account_users').select(['id', 'account_id']).where('email', '=', email).executeTakeFirstOrThrow();
}

let signedUp = 0;

/** A new account with its first user, signed in: a unique email, and the ids the services take. */
export async function newSignedInUser(app: FastifyInstance, db: Kysely<Database>, name: string) {
  signedUp += 1;
  const email = `${name.toLowerCase()}-${signedUp}-${randomBytes(3).toString('hex')}@users.example`;
  const client = await signUpUser(app, { email, accountName: `${name} ${signedUp}` });
  const { id: userId, account_id: accountId } = await userByEmail(db, email);
  return { client, email, userId, accountId };
}

/** An account's audit events of one action, oldest first: who, on what, and the detail as stored. */
export function auditEventsOf(db: Kysely<Database>, accountId: string, action: string) {
  return db
    .selectFrom('audit_events')
    .select(['actor', 'target_id', 'detail'])
    .where('account_id', '=', accountId)
    .where('action', '=', action)
    .orderBy('id')
    .execute();
}
