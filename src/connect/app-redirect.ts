/** The 303 back to the company's app after a hosted form or an OAuth flow: its redirectUri plus the outcome. */
import type { FastifyReply } from 'fastify';

/** The redirect URI with the outcome's parameters set (the Connect page's "Done" link too). */
export function appUrl(redirectUri: string, outcome: Record<string, string>): string {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries(outcome)) target.searchParams.set(name, value);
  return target.toString();
}

export function redirectToApp(reply: FastifyReply, redirectUri: string, outcome: Record<string, string>) {
  return reply.code(303).header('location', appUrl(redirectUri, outcome)).send();
}
