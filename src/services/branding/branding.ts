/**
 * A server's branding (CONTRACT 10): the display name, accent colour and logo its end users see on
 * the Connect page, the hosted form and the OAuth pages. Read here for those pages; changed by
 * branding-changes.ts (the dashboard and `keyward server brand`).
 */
import type { ServiceContext } from '../context.js';

export interface Branding {
  /** The name the end user knows the company's app by; null when unset. */
  displayName: string | null;
  /** `#rrggbb`, lower case; null for Keyward's own. */
  accentColor: string | null;
  /** Where Keyward serves the logo: a root-relative URL on Keyward itself (`/branding/…`), or null. */
  logoUrl: string | null;
}

export const NO_BRANDING: Branding = { displayName: null, accentColor: null, logoUrl: null };

/** The path of a logo version: the version is its digest, so the URL can be cached for good. */
export function logoPath(serverId: string, version: string): string {
  return `/branding/${encodeURIComponent(serverId)}/logo-${version}`;
}

/** The server's branding; a server that never set any (or an unknown id) has none. */
export async function readBranding(ctx: ServiceContext, serverId: string): Promise<Branding> {
  const row = await ctx.store.branding.ofServer(serverId);
  if (!row) return NO_BRANDING;
  return {
    displayName: row.display_name,
    accentColor: row.accent_color,
    logoUrl: row.logo_version ? logoPath(serverId, row.logo_version) : null,
  };
}

/** The logo at that version, for its URL; null once the server has another (or none). */
export async function readLogo(ctx: ServiceContext, serverId: string, version: string): Promise<{ bytes: Uint8Array; type: string } | null> {
  const row = await ctx.store.branding.logo(serverId, version);
  if (!row?.logo || !row.logo_type) return null;
  return { bytes: row.logo, type: row.logo_type };
}
