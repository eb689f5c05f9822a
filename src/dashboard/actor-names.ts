/**
 * Who did something, as the dashboard names them. Actor strings are stored on audit events and keys
 * ("member:usr_…", "api:key_…", "cli"…); this reads the names within one account.
 */
import type { ServiceContext } from '../services/context.js';

/** How the dashboard's changes name the member who made them, in the audit trail and in "created by". */
export function memberActor(memberId: string): string {
  return `member:${memberId}`;
}

/**
 * How each actor of a list is named on a page: a member by email, the CLI, an account key by label and
 * hint, an end user, a browser. Members and keys are looked up within the account only, so an actor
 * string can never reveal another account's member or key.
 */
export async function actorNames(ctx: ServiceContext, accountId: string, actors: Iterable<string>): Promise<Map<string, string>> {
  const unique = [...new Set(actors)];
  const memberIds = unique.filter((a) => a.startsWith('member:')).map((a) => a.slice('member:'.length));
  const keyIds = unique.filter((a) => a.startsWith('api:')).map((a) => a.slice('api:'.length));
  const members = await ctx.store.accounts.memberEmails(accountId, memberIds);
  const keys = await ctx.store.keys.accountKeyNames(accountId, keyIds);
  const emails = new Map(members.map((m) => [m.id, m.email]));
  const keyNames = new Map(keys.map((k) => [k.id, `API key ${k.label} (${k.hint})`]));
  const names = new Map<string, string>();
  for (const actor of unique) {
    if (actor === 'cli') names.set(actor, 'CLI');
    else if (actor === 'browser') names.set(actor, 'A browser');
    else if (actor.startsWith('end_user:')) names.set(actor, 'End user');
    else if (actor.startsWith('member:')) names.set(actor, emails.get(actor.slice('member:'.length)) ?? 'A former member');
    else if (actor.startsWith('api:')) names.set(actor, keyNames.get(actor.slice('api:'.length)) ?? 'An account API key');
    else names.set(actor, 'Keyward');
  }
  return names;
}
