/**
 * The "Audit" page: who did what in the account, newest first, 50 events a page, narrowed by user,
 * action and dates (CONTRACT 9). Every row is read through the user's account id, so another
 * account's events, keys, users and servers never appear. A page is one range of an index whatever
 * the trail's length (migration 017): the filter's columns, then the position of the last event shown.
 * audit-views.ts tells each event as a sentence.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { AuditFilter } from '../store/audit-repository.js';
import { actorNames } from './actor-names.js';
import { AUDIT_ACTION_LABELS, type AuditFilterForm, auditPage, type EventRow } from './audit-views.js';
import { catalogName } from './display-format.js';
import { Query, queryRoute, refuseMalformed } from './form-schemas.js';
import { sendPage } from './layout.js';
import { type PageRoutes, pageContext } from './plugin.js';

const PAGE_SIZE = 50;

/** A page position: the last shown event's time and id, so no event is skipped or repeated. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~(evt_[0-9a-f]{28})$/;
/** A day as a date control sends it; read as a UTC day, as the form says. */
const DAY = '^\\d{4}-\\d{2}-\\d{2}$';
/** Every field may come empty (the form's "All" choices and cleared dates); anything our form never sends is the 400 page. */
const AuditQuery = Query({
  before: Type.Optional(Type.String({ pattern: CURSOR.source })),
  user: Type.Optional(Type.String({ pattern: '^(|cli|user:usr_[0-9a-f]{28})$' })),
  action: Type.Optional(Type.String({ pattern: '^(|[a-z_]+\\.[a-z_]+)$', maxLength: 64 })),
  from: Type.Optional(Type.String({ pattern: `(${DAY})|^$` })),
  to: Type.Optional(Type.String({ pattern: `(${DAY})|^$` })),
});

/** The first instant of a UTC day, or undefined for a day the calendar does not have (2026-02-30). */
function dayStart(day: string, plusDays = 0): string | undefined {
  const at = new Date(`${day}T00:00:00.000Z`);
  if (Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== day) return undefined;
  return new Date(at.getTime() + plusDays * 86_400_000).toISOString();
}

export const registerAuditPages: PageRoutes = (scope, ctx) => {
  scope.get<{ Querystring: Static<typeof AuditQuery> }>('/audit', queryRoute(AuditQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const { accountId } = context.user;
    const { user = '', action = '', from = '', to = '' } = request.query;
    const form: AuditFilterForm = { user, action, from, to, errors: {} };
    if (action && !Object.hasOwn(AUDIT_ACTION_LABELS, action)) form.errors.action = 'Choose an action from the list.';
    const since = from ? dayStart(from) : undefined;
    const until = to ? dayStart(to, 1) : undefined;
    if (from && !since) form.errors.from = 'Enter a date that exists, such as 2026-01-31.';
    if (to && !until) form.errors.to = 'Enter a date that exists, such as 2026-01-31.';
    if (since && until && since >= until) form.errors.to = 'The "To" day must be on or after the "From" day.';
    const users = await ctx.store.accounts.usersOfAccount(accountId);
    if (Object.keys(form.errors).length)
      return sendPage(reply, auditPage(context, { form, users, events: [], names: new Map(), providerName: String, newest: true, older: null }), 422);

    const filter: AuditFilter = { actor: user || undefined, action: action || undefined, since, until };
    const cursor = request.query.before ? CURSOR.exec(request.query.before) : null;
    // One more than a page: whether it came tells whether there are older events.
    const rows: EventRow[] = await ctx.store.audit.pageOfAccount(accountId, filter, cursor ? { at: cursor[1]!, id: cursor[2]! } : null, PAGE_SIZE + 1);
    const events = rows.slice(0, PAGE_SIZE);
    const last = events.at(-1);
    const kept = new URLSearchParams(Object.entries({ user, action, from, to }).filter(([, value]) => value !== ''));
    const older =
      rows.length > PAGE_SIZE && last
        ? `/dashboard/audit?${kept.toString() ? `${kept}&` : ''}before=${encodeURIComponent(`${last.created_at}~${last.id}`)}`
        : null;
    const names = await actorNames(
      ctx,
      accountId,
      events.map((e) => e.actor),
    );
    const providerName = (slug: string) => catalogName(ctx.catalog, slug);
    return sendPage(
      reply,
      auditPage(context, {
        form,
        users,
        events,
        names,
        providerName,
        newest: !cursor,
        older,
        newestHref: `/dashboard/audit${kept.toString() ? `?${kept}` : ''}`,
      }),
    );
  });
};
