/**
 * Sets a member's profile (CONTRACT 10): display name, email and tags, for PATCH /v1/end-users/{id}
 * and a connect session's `endUser` alike, under the same rules (profile-rules.ts). A field left out
 * stays; null clears; tags merge key by key, a tag set to null is removed, and more than ten after
 * the merge is refused. It runs on the caller's transaction where one is open (a connect session
 * stores its `endUser` with the session), in one of its own otherwise; the member's row is locked
 * while its profile is read and written, so two changes merge one after the other. A change is
 * audited as `end_user.profile_updated` (which fields, which tag keys: never the values).
 */
import { iso } from '../../primitives/clock.js';
import type { StoredProfile } from '../../store/audience-repository.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { type EventEndUser, endUserOf } from '../webhooks/webhook-events.js';
import { type AudienceMemberView, type CredentialSummary, endUserNotFound, memberCredentialSummaries } from './members.js';
import { checkProfileChange, mergeTags, type ProfileChange } from './profile-rules.js';

export type { ProfileChange } from './profile-rules.js';

/** A member's profile as the API shows it: null where unset, {} for no tags. */
export type EndUserProfile = EventEndUser;

export interface ProfileUpdate {
  accountId: string;
  serverId: string;
  externalUserId: string;
  change: ProfileChange;
  /** Make the member where the server has none of that id (a connect session); otherwise such a member is end_user_not_found. */
  makeIfNew?: boolean;
  actor: Actor;
  /** Where the caller's input holds the fields (`endUser/` for a connect session's body), for the error's path. */
  fieldsAt?: string;
}

export interface ProfileUpdated {
  /** The member's row as the change left it. */
  member: { id: string; createdAt: string; updatedAt: string };
  profile: EndUserProfile;
  /** The member was made by this call. */
  created: boolean;
  /** Something of the profile changed (and was audited). */
  changed: boolean;
}

export async function setEndUserProfile(ctx: ServiceContext, input: ProfileUpdate): Promise<ProfileUpdated> {
  const at = input.fieldsAt ?? '';
  const change = checkProfileChange(input.change, at);
  return ctx.store.transaction(async () => {
    const now = iso(ctx.clock.now());
    const { audience } = ctx.store;
    let member = await audience.lockedProfile(input.serverId, input.externalUserId);
    let created = false;
    if (member === undefined) {
      if (!input.makeIfNew) throw endUserNotFound();
      await audience.ensureMember(input.serverId, input.externalUserId, now);
      member = await audience.lockedProfile(input.serverId, input.externalUserId);
      if (member === undefined) throw new Error('the member row just written is missing');
      created = true;
    }
    const before = endUserOf(member);
    const after: EndUserProfile = {
      displayName: change.displayName === undefined ? before.displayName : change.displayName,
      email: change.email === undefined ? before.email : change.email,
      tags: change.tags === undefined ? before.tags : mergeTags(before.tags, change.tags, `${at}tags`),
    };
    const tagKeys = changedTagKeys(before.tags, after.tags);
    const fields = [
      ...(after.displayName !== before.displayName ? ['displayName'] : []),
      ...(after.email !== before.email ? ['email'] : []),
      ...(tagKeys.length ? ['tags'] : []),
    ];
    const row = { id: member.id, createdAt: member.created_at, updatedAt: member.updated_at };
    if (fields.length === 0) return { member: row, profile: after, created, changed: false };
    const tags = Object.entries(after.tags).map(([key, value]) => ({ key, value }));
    const stored: StoredProfile = { display_name: after.displayName, email: after.email, tags: tags.length ? JSON.stringify(after.tags) : null };
    await audience.writeProfile(member.id, stored, tagKeys.length ? tags : undefined, now);
    await recordAudit(ctx, {
      accountId: input.accountId,
      serverId: input.serverId,
      actor: input.actor,
      action: 'end_user.profile_updated',
      targetId: member.id,
      detail: { externalUserId: input.externalUserId, fields, ...(tagKeys.length ? { tagKeys } : {}), ...(created ? { created } : {}) },
      at: now,
    });
    return { member: { ...row, updatedAt: now }, profile: after, created, changed: true };
  });
}

/** The keys whose tag was added, changed or removed, in order. */
function changedTagKeys(before: Record<string, string>, after: Record<string, string>): string[] {
  const [was, is] = [new Map(Object.entries(before)), new Map(Object.entries(after))];
  return [...new Set([...was.keys(), ...is.keys()])].filter((key) => was.get(key) !== is.get(key)).sort();
}

/**
 * PATCH /v1/end-users/{id}: the change to an existing member (end_user_not_found otherwise), answered
 * with the member as the list shows it, read on the change's transaction.
 */
export async function updateEndUser(ctx: ServiceContext, input: Omit<ProfileUpdate, 'makeIfNew' | 'fieldsAt'>): Promise<AudienceMemberView<CredentialSummary>> {
  return ctx.store.transaction(async () => {
    const { member, profile } = await setEndUserProfile(ctx, input);
    const credentials = await memberCredentialSummaries(ctx, member.id);
    return { externalUserId: input.externalUserId, createdAt: member.createdAt, updatedAt: member.updatedAt, ...profile, credentials };
  });
}
