/** Every group of signed-in dashboard pages, each in its own file. */
import type { PageRoutes } from './plugin.js';

export const DASHBOARD_PAGES: PageRoutes[] = [];
