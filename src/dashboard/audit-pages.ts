/**
 * The "Audit" page: who did what in the account, newest first, 50 events a page. Every row is read
 * through the user's account id, so another account's events, keys, users and servers never
 * appear. audit-views.ts tells each event as a sentence.
 */
import { type Static, Type } from '@sinclair/typebox';
import { actorNames } from './actor-names.js';
import { auditPage, type EventRow } from './audit-views.js';
import { catalogName } from './display-format.js';
import { Query, queryRoute, refuseMalformed } from './form-schemas.js';
import { sendPage } from './layout.js';
import { type PageRoutes, pageContext } from './plugin.js';

const PAGE_SIZE = 50;

/** A page position: the last shown event's time and id, so no event is skipped or repeated. */
const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)~(evt_[0-9a-f]{28})$/;
/** A cursor this page did not make is refused (the 400 page), as /v1 refuses one. */
const AuditQuery = Query({ before: Type.Optional(Type.String({ pattern: CURSOR.source })) });

export const registerAuditPages: PageRoutes = (scope, ctx) => {
  scope.get<{ Querystring: Static<typeof AuditQuery> }>('/audit', queryRoute(AuditQuery), async (request, reply) => {
    refuseMalformed(request);
    const context = pageContext(request);
    const { accountId } = context.user;
    const cursor = request.query.before ? CURSOR.exec(request.query.before) : null;

    // One more than a page: whether it came tells whether there are older events.
    const rows: EventRow[] = await ctx.store.audit.pageOfAccount(accountId, cursor ? { at: cursor[1]!, id: cursor[2]! } : null, PAGE_SIZE + 1);
    const events = rows.slice(0, PAGE_SIZE);
    const last = events.at(-1);
    const older = rows.length > PAGE_SIZE && last ? `/dashboard/audit?before=${encodeURIComponent(`${last.created_at}~${last.id}`)}` : null;
    const names = await actorNames(
      ctx,
      accountId,
      events.map((e) => e.actor),
    );

    const providerName = (slug: string) => catalogName(ctx.catalog, slug);
    return sendPage(reply, auditPage(context, { events, names, providerName, newest: !cursor, older }));
  });
};
