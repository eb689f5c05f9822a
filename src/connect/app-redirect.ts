/** The 303 back to the company's app after a hosted form or an OAuth flow: its redirectUri plus the outcome. */
import type { FastifyReply } from 'fastify';

export function redirectToApp(reply: FastifyReply, redirectUri: string, outcome: Record<string, string>) {
  const target = new URL(redirectUri);
  for (const [name, value] of Object.entries(outcome)) target.searchParams.set(name, value);
  return reply.code(303).header('location', target.toString()).send();
}
