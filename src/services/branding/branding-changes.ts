/**
 * Changing a server's branding (CONTRACT 10), for the dashboard's "Branding" form and `keyward server
 * brand`: every input is checked before anything is written, so a refused logo or colour leaves the
 * stored branding as it was; the change and its audit entry are one transaction.
 */
import { hash } from 'node:crypto';
import { iso } from '../../primitives/clock.js';
import { recordAudit } from '../audit/audit.js';
import type { Actor, ServiceContext } from '../context.js';
import { invalid } from '../domain-error.js';
import { getServer } from '../servers/servers.js';
import { requireWellFormed } from '../well-formed.js';
import { type Branding, readBranding } from './branding.js';
import { checkLogo } from './logo-check.js';

export const MAX_DISPLAY_NAME_LENGTH = 100;
const ACCENT_COLOR = /^#[0-9a-fA-F]{6}$/;

/** What to change: a field left out stays; null (or an empty text) clears it. */
export interface BrandingInput {
  displayName?: string | null;
  accentColor?: string | null;
  /** The logo's bytes as uploaded (checked here), or null to remove it. */
  logo?: Uint8Array | null;
}

/** The display name as stored: trimmed, null when empty. */
export function checkDisplayName(value: string): string | null {
  requireWellFormed({ displayName: ['display name', value] });
  const name = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is this check's purpose.
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw invalid('displayName', 'the display name must not contain control characters');
  if ([...name].length > MAX_DISPLAY_NAME_LENGTH) throw invalid('displayName', `the display name must be at most ${MAX_DISPLAY_NAME_LENGTH} characters`);
  return name || null;
}

/** The accent colour as stored: `#rrggbb` in lower case, null when empty. */
export function checkAccentColor(value: string): string | null {
  const colour = value.trim();
  if (!colour) return null;
  if (!ACCENT_COLOR.test(colour)) throw invalid('accentColor', 'the accent colour must be #rrggbb: a # and six hex digits, such as #2456d6');
  return colour.toLowerCase();
}

/**
 * Sets what `input` names on the server's branding; audited (as `server.branding_changed`, naming
 * what changed, never the logo's bytes) only where something did change. The branding as it now is.
 */
export async function changeBranding(ctx: ServiceContext, serverId: string, input: BrandingInput, actor: Actor): Promise<Branding> {
  const displayName = input.displayName === undefined ? undefined : checkDisplayName(input.displayName ?? '');
  const accentColor = input.accentColor === undefined ? undefined : checkAccentColor(input.accentColor ?? '');
  const logo = input.logo ? checkLogo(input.logo) : input.logo;
  const now = iso(ctx.clock.now());
  await ctx.store.transaction(async () => {
    const server = await getServer(ctx, serverId);
    const before = await ctx.store.branding.ofServer(serverId);
    const detail: Record<string, unknown> = {};
    if (displayName !== undefined && displayName !== (before?.display_name ?? null)) {
      detail.displayName = { from: before?.display_name ?? null, to: displayName };
    }
    if (accentColor !== undefined && accentColor !== (before?.accent_color ?? null)) {
      detail.accentColor = { from: before?.accent_color ?? null, to: accentColor };
    }
    const version = logo ? hash('sha256', logo.bytes, 'hex').slice(0, 16) : null;
    if (logo && version !== before?.logo_version) detail.logo = { change: 'uploaded', type: logo.type, bytes: logo.bytes.length, version };
    if (logo === null && before?.logo_version) detail.logo = { change: 'removed' };
    if (Object.keys(detail).length === 0) return;
    await ctx.store.branding.save(
      serverId,
      {
        ...('displayName' in detail ? { displayName } : {}),
        ...('accentColor' in detail ? { accentColor } : {}),
        ...('logo' in detail ? { logo: logo && version ? { bytes: logo.bytes, type: logo.type, version } : null } : {}),
      },
      now,
    );
    await recordAudit(ctx, { accountId: server.account_id, serverId, actor, action: 'server.branding_changed', targetId: serverId, detail, at: now });
  });
  return readBranding(ctx, serverId);
}
