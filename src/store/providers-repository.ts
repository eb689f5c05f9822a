/** The providers enabled on a server (server_providers) and its custom providers. */
import type { Insertable, Selectable } from 'kysely';
import { Repository } from './repository.js';
import type { CustomProvidersTable, ServerProvidersTable } from './schema.js';

/** What enabling a provider sets: its OAuth client (the secret sealed), scopes, and when. */
export type EnabledProviderSettings = Omit<Insertable<ServerProvidersTable>, 'server_id' | 'provider'>;

/** One enabled provider as the dashboard lists it: never its sealed client secret (not even selected). */
export interface EnabledProviderListing {
  provider: string;
  client_id: string | null;
  scopes: string | null;
  enabled_at: string;
  /** The custom provider's definition, null for a catalog provider. */
  definition: string | null;
}

export class ProvidersRepository extends Repository {
  /** A server's custom provider of that slug: its JSON definition. */
  async customDefinition(serverId: string, slug: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('custom_providers').select('definition').where('server_id', '=', serverId).where('slug', '=', slug).executeTakeFirst();
    return row?.definition;
  }

  /** The server's settings of an enabled provider, without its sealed client secret. */
  async findEnabled(serverId: string, slug: string): Promise<Pick<Selectable<ServerProvidersTable>, 'client_id' | 'scopes'> | undefined> {
    return this.db
      .selectFrom('server_providers')
      .select(['client_id', 'scopes'])
      .where('server_id', '=', serverId)
      .where('provider', '=', slug)
      .executeTakeFirst();
  }

  /** The sealed OAuth client secret of an enabled provider; null where there is none or the provider is not enabled. */
  async sealedClientSecret(serverId: string, slug: string): Promise<Uint8Array | null> {
    const row = await this.db
      .selectFrom('server_providers')
      .select('client_secret')
      .where('server_id', '=', serverId)
      .where('provider', '=', slug)
      .executeTakeFirst();
    return row?.client_secret ?? null;
  }

  /** Enables a provider on a server, or replaces its settings where it already is. */
  async enable(serverId: string, slug: string, settings: EnabledProviderSettings): Promise<void> {
    await this.db
      .insertInto('server_providers')
      .values({ server_id: serverId, provider: slug, ...settings })
      .onConflict((oc) => oc.columns(['server_id', 'provider']).doUpdateSet(settings))
      .execute();
  }

  async addCustom(row: Insertable<CustomProvidersTable>): Promise<void> {
    await this.db.insertInto('custom_providers').values(row).execute();
  }

  /** The providers enabled on one server, by slug, each with its custom definition if it has one. */
  async listEnabled(serverId: string): Promise<EnabledProviderListing[]> {
    return this.db
      .selectFrom('server_providers as sp')
      .leftJoin('custom_providers as cp', (join) => join.onRef('cp.server_id', '=', 'sp.server_id').onRef('cp.slug', '=', 'sp.provider'))
      .select(['sp.provider', 'sp.client_id', 'sp.scopes', 'sp.enabled_at', 'cp.definition'])
      .where('sp.server_id', '=', serverId)
      .orderBy('sp.provider')
      .execute();
  }
}
