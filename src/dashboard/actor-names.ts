/**
 * Who did something, as the dashboard names them. Actor strings are stored on audit events and keys
 * ("user:usr_…", "api:key_…", "cli"…); this reads the names within one account.
 */
import type { ServiceContext } from '../services/context.js';

/**
 * The user id in a dashboard user's actor string: `user:usr_…`, or `member:usr_…`, the spelling before
 * migration 012. The migration rewrites the stored ones and every node is stopped across it (README), so
 * this reading is defensive: an old spelling that escaped the rewrite (a request in flight while 012
 * ran) is named as the user rather than shown raw.
 */
function userIdOf(actor: string): string | undefined {
  if (actor.startsWith('user:')) return actor.slice('user:'.length);
  if (actor.startsWith('member:usr_')) return actor.slice('member:'.length);
  return undefined;
}

/**
 * How each actor of a list is named on a page: a dashboard user by email, the CLI, an account key by label and
 * hint, an end user, a browser. Users and keys are looked up within the account only, so an actor
 * string can never reveal another account's user or key.
 */
export async function actorNames(ctx: ServiceContext, accountId: string, actors: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(actors)];
  const userIds = unique.flatMap((a) => userIdOf(a) ?? []);
  const keyIds = unique.filter((a) => a.startsWith('api:')).map((a) => a.slice('api:'.length));
  const users = await ctx.store.accounts.userEmails(accountId, userIds);
  const keys = await ctx.store.keys.accountKeyNames(accountId, keyIds);
  const emails = new Map(users.map((u) => [u.id, u.email]));
  const keyNames = new Map(keys.map((k) => [k.id, `API key ${k.label} (${k.hint})`]));
  const names = new Map<string, string>();
  for (const actor of unique) {
    const userId = userIdOf(actor);
    if (userId !== undefined) names.set(actor, emails.get(userId) ?? 'A former user');
    else if (actor === 'cli') names.set(actor, 'CLI');
    else if (actor === 'browser') names.set(actor, 'A browser');
    else if (actor.startsWith('end_user:')) names.set(actor, 'End user');
    else if (actor.startsWith('api:')) names.set(actor, keyNames.get(actor.slice('api:'.length)) ?? 'An account API key');
    else names.set(actor, 'Keyward');
  }
  return names;
}
