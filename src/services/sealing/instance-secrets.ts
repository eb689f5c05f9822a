/**
 * The installation's own random secrets, one per use: the same on every node whatever master key it
 * runs on (unlike a key derived from the master key), yet unreadable without the master key (sealed
 * like every other secret, and resealed by a rotation). Made by the first node that needs one.
 */
import { randomBytes } from 'node:crypto';
import type { ServiceContext } from '../context.js';

export type InstanceSecretName = 'sign-in-attempts';

export const instanceSecretAad = (name: string) => `instance_secrets|${name}`;

/**
 * Secrets already opened, per store: a secret never changes once stored (a rotation reseals the same
 * bytes), and a sign-in asks for it twice (to count the attempt, then to clear the count). Only one
 * that was found stored is kept: one made here could still vanish with a transaction rolled back.
 */
const opened = new WeakMap<object, Map<InstanceSecretName, Buffer>>();

/** The secret of that use (32 bytes), made and stored first if no node has made it yet. */
export async function instanceSecret(ctx: Pick<ServiceContext, 'store' | 'vault' | 'clock'>, name: InstanceSecretName): Promise<Buffer> {
  const known = opened.get(ctx.store)?.get(name);
  if (known) return known;
  const stored = await ctx.store.instanceSecrets.find(name);
  if (stored) {
    const secret = open(ctx, name, stored);
    opened.set(ctx.store, (opened.get(ctx.store) ?? new Map()).set(name, secret));
    return secret;
  }
  const made = ctx.vault.seal(randomBytes(32).toString('base64'), instanceSecretAad(name));
  // Two nodes making it at once: the first insert wins and both read it back.
  await ctx.store.instanceSecrets.addIfAbsent(name, made, ctx.clock.now().toISOString());
  const kept = await ctx.store.instanceSecrets.find(name);
  if (!kept) throw new Error(`the instance secret ${name} was not stored`);
  return open(ctx, name, kept);
}

function open(ctx: Pick<ServiceContext, 'vault'>, name: InstanceSecretName, sealed: Parameters<ServiceContext['vault']['open']>[0]): Buffer {
  return Buffer.from(ctx.vault.open(sealed, instanceSecretAad(name)), 'base64');
}
