/** What an operator picks from (`keyward provider list`): the catalog and a server's own providers, by slug. */
import { CATALOG } from '../../catalog/catalog.js';
import { checkable, proxiable } from '../../catalog/provider-definition.js';
import type { ServiceContext } from '../context.js';
import { getServer } from '../servers/servers.js';
import { listServerProviders } from './server-providers.js';

/** One provider as an operator lists them (`keyward provider list`): what it is, never a secret. */
export interface ProviderChoice {
  slug: string;
  name: string;
  kind: 'oauth2' | 'static';
  custom: boolean;
  enabled: boolean;
  /** The gateway can proxy calls to it: it has an API base URL (CONTRACT 8.5). */
  proxy: boolean;
  /** Its static credentials can be checked: it has a `verify` request (CONTRACT 8.3). */
  checked: boolean;
}

/**
 * Every provider a server can use: those enabled on it (custom ones always are), then the rest of the
 * catalog, each by slug; so an operator finds the slug to enable or connect without reading tables.
 */
export async function listProviderChoices(ctx: ServiceContext, serverId: string): Promise<ProviderChoice[]> {
  await getServer(ctx, serverId);
  const enabled = await listServerProviders(ctx, serverId);
  const enabledSlugs = new Set(enabled.map((p) => p.slug));
  const available = [...CATALOG.values()].filter((p) => !enabledSlugs.has(p.slug)).sort((a, b) => (a.slug < b.slug ? -1 : 1));
  return [
    ...enabled.map((p) => ({ slug: p.slug, name: p.name, kind: p.kind, custom: p.custom, enabled: true, proxy: p.proxy, checked: p.checked })),
    ...available.map((p) => ({ slug: p.slug, name: p.name, kind: p.kind, custom: false, enabled: false, proxy: proxiable(p), checked: checkable(p) })),
  ];
}
