/**
 * `keyward server brand --server S [--display-name N] [--accent-color #rrggbb] [--logo FILE | --no-logo]`
 * (CONTRACT 4 and 10): sets what the flags name and prints the server's branding as it now is,
 * `{"serverId","displayName","accentColor","logo"}`, where `logo` is the URL Keyward serves the logo
 * at (KEYWARD_PUBLIC_URL + /branding/…), or null. An empty --display-name or --accent-color clears
 * that field; --no-logo removes the logo; with no flag but --server nothing changes and the branding
 * is printed. The file is judged by its bytes (PNG or SVG, at most 64 KiB), never by its name.
 */
import { readFile, stat } from 'node:fs/promises';
import { readBranding } from '../services/branding/branding.js';
import { type BrandingInput, changeBranding } from '../services/branding/branding-changes.js';
import { logoTooLarge, MAX_LOGO_BYTES } from '../services/branding/logo-check.js';
import { CLI_ACTOR, type ServiceContext } from '../services/context.js';
import { DomainError, invalid } from '../services/domain-error.js';
import { getServer } from '../services/servers/servers.js';
import { type Command, optional, str } from './commands.js';
import { UsageError } from './parse-options.js';

/** The logo file's bytes; one that cannot be read, or is over 64 KiB, is refused before the rest of it is read. */
async function logoBytes(file: string): Promise<Uint8Array> {
  try {
    const { size } = await stat(file);
    if (size > MAX_LOGO_BYTES) throw logoTooLarge(size);
    return await readFile(file);
  } catch (error) {
    // A DomainError (the size refused above) has a `code` too: only the file system's errors are read here.
    const code = error instanceof DomainError ? undefined : (error as NodeJS.ErrnoException).code;
    if (!code) throw error;
    throw invalid('logo', `cannot read the logo file ${file} (${code === 'ENOENT' ? 'no such file' : code})`);
  }
}

export const brandCommand: Command = {
  usage: 'server brand --server S [--display-name N] [--accent-color #rrggbb] [--logo FILE | --no-logo]',
  options: {
    server: { type: 'string', required: true },
    'display-name': { type: 'string' },
    'accent-color': { type: 'string' },
    logo: { type: 'string' },
    'no-logo': { type: 'boolean' },
  },
  run: async (ctx, o) => {
    const serverId = str(o, 'server');
    const file = optional(o, 'logo');
    if (file !== undefined && o['no-logo']) throw new UsageError('--logo and --no-logo cannot be given together');
    if (file === '') throw new UsageError('--logo needs a file (--no-logo removes the logo)');
    const input: BrandingInput = {
      displayName: optional(o, 'display-name'),
      accentColor: optional(o, 'accent-color'),
      ...(file !== undefined ? { logo: await logoBytes(file) } : o['no-logo'] ? { logo: null } : {}),
    };
    const changes = Object.values(input).some((value) => value !== undefined);
    const branding = changes ? await changeBranding(ctx, serverId, input, CLI_ACTOR) : await brandingOf(ctx, serverId);
    return {
      serverId,
      displayName: branding.displayName,
      accentColor: branding.accentColor,
      logo: branding.logoUrl ? `${ctx.publicUrl}${branding.logoUrl}` : null,
    };
  },
  text: (r) =>
    [
      `Branding of ${r.serverId}:`,
      `  display name: ${r.displayName ?? '(none)'}`,
      `  accent colour: ${r.accentColor ?? '(none)'}`,
      `  logo: ${r.logo ?? '(none)'}`,
    ].join('\n'),
};

/** The branding of a server that must exist: an unknown id is refused, not answered with no branding. */
async function brandingOf(ctx: ServiceContext, serverId: string) {
  await getServer(ctx, serverId);
  return readBranding(ctx, serverId);
}
