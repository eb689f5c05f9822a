/**
 * Forms that create something act once (issue 8, item 9). Each carries a one-time nonce; the POST
 * claims it in the database before creating, so a resubmission of the same form (a reload of the
 * page that shows a key once, a double click, on any node) makes nothing and says so.
 *
 * Chosen over Post/Redirect/Get with a flash: PRG stops a reload but not a double click, whose two
 * POSTs are both in flight before any redirect; and the nonce needs no secret kept on the server.
 */
import type { FastifyReply } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { claimFormNonce, FORM_NONCE, releaseFormNonce } from '../services/users/dashboard-forms.js';
import { sendPage } from './layout.js';
import { alreadySubmittedBody, type Breadcrumb, dashboardPage, formExpiredPage, type PageContext, type Section } from './layout-views.js';

export interface OnceTarget {
  section: Section;
  /** The page the form was on, offered as the way back. */
  back: Breadcrumb;
  /** What the user should do if the first answer (with a key shown once) was lost. */
  lost: string;
}

/**
 * Runs `create` only for the first submission of the form, whose nonce is `once` (the body's, as its
 * schema let it through). An answer with an error status made nothing, so its nonce is given back and
 * the same form may be sent again (after a correction, or a reload once the cause is gone).
 */
export async function createOnce(
  ctx: ServiceContext,
  once: string | undefined,
  reply: FastifyReply,
  context: PageContext,
  target: OnceTarget,
  create: () => Promise<FastifyReply>,
): Promise<FastifyReply> {
  if (once === undefined || !FORM_NONCE.test(once)) return sendPage(reply, formExpiredPage(), 403);
  if (!(await claimFormNonce(ctx, once))) {
    const body = alreadySubmittedBody(target);
    return sendPage(reply, dashboardPage(context, { title: 'Form already submitted', section: target.section, body }), 409);
  }
  try {
    const answer = await create();
    if (reply.statusCode >= 400) await releaseFormNonce(ctx, once);
    return answer;
  } catch (error) {
    await releaseFormNonce(ctx, once);
    throw error;
  }
}
