/** Servers' branding (migration 020): what the end users' pages show, and the logo they load. */
import { Repository } from './repository.js';

export interface BrandingChange {
  displayName?: string | null;
  accentColor?: string | null;
  /** A new logo (its bytes, content type and version), or null to remove it; absent, the logo stays. */
  logo?: { bytes: Uint8Array; type: string; version: string } | null;
}

export class BrandingRepository extends Repository {
  /** The server's branding without the logo's bytes: what a page needs to draw its frame. */
  ofServer(serverId: string) {
    return this.db
      .selectFrom('server_branding')
      .select(['display_name', 'accent_color', 'logo_type', 'logo_version', 'updated_at'])
      .where('server_id', '=', serverId)
      .executeTakeFirst();
  }

  /** The logo's bytes and type, only while `version` is the current one: an older URL finds nothing. */
  logo(serverId: string, version: string) {
    return this.db
      .selectFrom('server_branding')
      .select(['logo', 'logo_type'])
      .where('server_id', '=', serverId)
      .where('logo_version', '=', version)
      .executeTakeFirst();
  }

  /** Writes the fields `change` names, leaving the others as they are; makes the row on the first change. */
  async save(serverId: string, change: BrandingChange, at: string): Promise<void> {
    const set: Record<string, unknown> = { updated_at: at };
    if (change.displayName !== undefined) set.display_name = change.displayName;
    if (change.accentColor !== undefined) set.accent_color = change.accentColor;
    if (change.logo !== undefined) {
      set.logo = change.logo?.bytes ?? null;
      set.logo_type = change.logo?.type ?? null;
      set.logo_version = change.logo?.version ?? null;
    }
    await this.db
      .insertInto('server_branding')
      .values({ server_id: serverId, display_name: null, accent_color: null, logo: null, logo_type: null, logo_version: null, ...set, updated_at: at })
      .onConflict((oc) => oc.column('server_id').doUpdateSet(set))
      .execute();
  }
}
