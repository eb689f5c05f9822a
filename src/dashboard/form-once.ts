/**
 * Forms that create something act once (issue 8, item 9). Each carries a one-time nonce; the POST
 * claims it in the database before creating, so a resubmission of the same form (a reload of the
 * page that shows a key once, a double click, on any node) makes nothing and says so.
 *
 * Chosen over Post/Redirect/Get with a flash: PRG stops a reload but not a double click, whose two
 * POSTs are both in flight before any redirect; and the nonce needs no secret kept on the server.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServiceContext } from '../services/context.js';
import { claimFormNonce, FORM_NONCE, releaseFormNonce } from '../services/dashboard-forms.js';
import { formText } from '../web/form-fields.js';
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
 * Runs `create` only for the first submission of the form. An answer with an error status made
 * nothing, so its nonce is given back and the same form may be sent again (after a correction, or a
 * reload once the cause is gone).
 */
export async function createOnce(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  context: PageContext,
  target: OnceTarget,
  create: () => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const nonce = formText(request.body, 'once');
  if (!FORM_NONCE.test(nonce)) return sendPage(reply, formExpiredPage(), 403);
  if (!(await claimFormNonce(ctx, nonce))) {
    const body = alreadySubmittedBody(target);
    return sendPage(reply, dashboardPage(context, { title: 'Form already submitted', section: target.section, body }), 409);
  }
  try {
    const answer = await create();
    if (reply.statusCode >= 400) await releaseFormNonce(ctx, nonce);
    return answer;
  } catch (error) {
    await releaseFormNonce(ctx, nonce);
    throw error;
  }
}
