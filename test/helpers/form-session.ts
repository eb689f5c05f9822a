/** The API side of the hosted-form suites: create a form session, read a member back. */
import type { FastifyInstance } from 'fastify';

export interface CreatedForm {
  id: string;
  provider: string;
  externalUserId: string;
  status: string;
  url: string;
  expiresAt: string;
  createdAt: string;
  fields: { name: string; label: string; secret: boolean; required: boolean }[];
}

export function requestForm(app: FastifyInstance, headers: Record<string, string>, provider: string, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: `/v1/credentials/static/${provider}/connect`, headers, payload: body });
}

/** A form session the API must accept (201); anything else fails the test with the body. */
export async function createForm(
  app: FastifyInstance,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  provider = 'openai',
): Promise<CreatedForm> {
  const response = await requestForm(app, headers, provider, body);
  if (response.statusCode !== 201) throw new Error(`connect answered ${response.statusCode}: ${response.body}`);
  return response.json() as CreatedForm;
}

/** GET /v1/end-users/{id}: the status and, on 200, the member with its secrets. */
export async function readEndUser(app: FastifyInstance, headers: Record<string, string>, externalUserId: string) {
  const response = await app.inject({ method: 'GET', url: `/v1/end-users/${encodeURIComponent(externalUserId)}`, headers });
  return {
    status: response.statusCode,
    body: response.json() as {
      code?: string;
      credentials: { id: string; provider: string; type: string; status: string; values?: Record<string, string> }[];
    },
  };
}

/** The message shown beside one field of a re-rendered form, or null. */
export function fieldMessage(html: string, field: string): string | null {
  return new RegExp(`<p class="error" id="field-${field}-error">([^<]*)</p>`).exec(html)?.[1] ?? null;
}

/** The `value` attribute of one input of a rendered form. */
export function inputValue(html: string, field: string): string | null {
  return new RegExp(`<input id="field-${field}"[^>]*\\svalue="([^"]*)"`).exec(html)?.[1] ?? null;
}
