/** Every group of signed-in dashboard pages, each in its own file. */
import { registerAudiencePages } from './audience-pages.js';
import { registerAuditPages } from './audit-pages.js';
import { registerBrandingPages } from './branding-pages.js';
import { registerDeveloperPages } from './developer-pages.js';
import type { PageRoutes } from './plugin.js';
import { registerProviderPages } from './provider-pages.js';
import { registerSecurityPages } from './security-pages.js';
import { registerServerPages } from './server-pages.js';
import { registerTeamPages } from './team-pages.js';
import { registerWebhookPages } from './webhook-pages.js';

export const DASHBOARD_PAGES: PageRoutes[] = [
  registerServerPages,
  registerBrandingPages,
  registerDeveloperPages,
  registerAuditPages,
  registerProviderPages,
  registerAudiencePages,
  registerWebhookPages,
  registerTeamPages,
  registerSecurityPages,
];
