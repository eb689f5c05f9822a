/**
 * The team as a person uses it, over app.inject: "Invite" on the Team page (the link read from the
 * page that shows it once), and joining through the link in a fresh browser.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { csrfOf, DashboardClient, hiddenFieldsOf } from './dashboard-session.js';

export const TEAM = '/dashboard/team';
export const INVITE = '/dashboard/team/invitations';
export const JOIN = '/dashboard/join';
export const PASSWORD = 'correct horse battery staple';

/** The link in a page that shows one once. */
export const LINK_IN_PAGE = /value="(https?:\/\/[^"]+\/dashboard\/join\/([A-Za-z0-9_-]{43}))"/;

/** Invites from the Team page; the answer, and the link it shows (undefined when it shows none). */
export async function inviteOnPage(client: DashboardClient, email: string, role: string) {
  const response = await client.submit(TEAM, INVITE, { email, role });
  const match = LINK_IN_PAGE.exec(response.body);
  return { response, url: match?.[1], token: match?.[2] };
}

/** A link's path on the app (its token), whatever public URL it was made with. */
export const pathOf = (url: string) => new URL(url).pathname;

/** Opens the link in a new browser and joins with `password`: the browser, and the POST's answer. */
export async function joinWithLink(
  app: FastifyInstance,
  url: string,
  password = PASSWORD,
): Promise<{ client: DashboardClient; response: LightMyRequestResponse }> {
  const client = new DashboardClient(app);
  const page = await client.get(pathOf(url));
  if (page.statusCode !== 200) return { client, response: page };
  const response = await client.post(JOIN, { ...hiddenFieldsOf(page.body, JOIN), password });
  return { client, response };
}

/** Invites `email` as `role` and joins with the link: the new user's signed-in browser. */
export async function invitedUser(app: FastifyInstance, inviter: DashboardClient, email: string, role: string): Promise<DashboardClient> {
  const { url, response } = await inviteOnPage(inviter, email, role);
  if (!url) throw new Error(`the invitation answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  const joined = await joinWithLink(app, url);
  if (joined.response.statusCode !== 303) throw new Error(`joining answered ${joined.response.statusCode}: ${joined.response.body.slice(0, 300)}`);
  return joined.client;
}

/** Posts one user's role select, as its row's form does. */
export async function changeRoleOnPage(client: DashboardClient, userId: string, role: string) {
  const page = await client.get(TEAM);
  return client.post(`${TEAM}/role`, { csrf: csrfOf(page.body), user: userId, role });
}

/** "Remove" on a user's row, then the confirmation page's button. */
export async function removeOnPage(client: DashboardClient, userId: string) {
  const confirm = await client.get(`${TEAM}/remove?user=${encodeURIComponent(userId)}`);
  if (confirm.statusCode !== 200) return confirm;
  return client.post(`${TEAM}/remove`, hiddenFieldsOf(confirm.body, `${TEAM}/remove`));
}
