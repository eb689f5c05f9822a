/** Connect sessions (CONTRACT 10) for the suites: create one through the API, and the page's parts as a browser reads them. */
import type { FastifyInstance } from 'fastify';

export interface CreatedSession {
  id: string;
  externalUserId: string;
  url: string;
  expiresAt: string;
  createdAt: string;
}

export function requestSession(
  app: FastifyInstance,
  headers: Record<string, string>,
  body: Record<string, unknown>,
  extraHeaders: Record<string, string> = {},
) {
  return app.inject({ method: 'POST', url: '/v1/connect-sessions', headers: { ...headers, ...extraHeaders }, payload: body });
}

/** A session the API must accept (201); anything else fails the test with the body. */
export async function createSession(app: FastifyInstance, headers: Record<string, string>, body: Record<string, unknown>): Promise<CreatedSession> {
  const response = await requestSession(app, headers, body);
  if (response.statusCode !== 201) throw new Error(`connect-sessions answered ${response.statusCode}: ${response.body}`);
  return response.json() as CreatedSession;
}

/** `/connect/s/{token}` of a session's URL. */
export function pagePath(session: Pick<CreatedSession, 'url'>): string {
  return new URL(session.url).pathname;
}

/** The page's text as a person reads it: tags dropped, entities of the escaping template undone, spaces collapsed. */
export function pageText(body: string): string {
  return body
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** One provider's item of the page (its heading, state and forms), or null where the page does not offer it. */
export function providerItem(body: string, slug: string): string | null {
  return new RegExp(`<li class="provider" id="provider-${slug}">([\\s\\S]*?)</li>`).exec(body)?.[1] ?? null;
}

/** What the page tells connect.js: its events and the origins they go to (its data attributes). */
export function pageData(body: string): { origins: string[]; events: Record<string, string>[]; popup: boolean } {
  const data = /<div id="keyward-connect" hidden data-origins="([^"]*)" data-events="([^"]*)" data-popup="([^"]*)">/.exec(body);
  if (!data) throw new Error('no keyward-connect data on the page');
  const unescaped = (text: string) => text.replace(/&quot;/g, '"').replace(/&amp;/g, '&');
  return { origins: JSON.parse(unescaped(data[1]!)), events: JSON.parse(unescaped(data[2]!)), popup: data[3] === '1' };
}
