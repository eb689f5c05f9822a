/**
 * The installation's own random secrets, one per use: the same on every node whatever master key it
 * runs on (unlike a key derived from the master key), yet unreadable without the master key (sealed
 * like every other secret, and resealed by a rotation). Made by the first node that needs one.
 */
import { randomBytes } from 'node:crypto';
import type { ServiceContext } from './context.js';

export type InstanceSecretName = 'sign-in-attempts';

export const instanceSecretAad = (name: string) => `instance_secrets|${name}`;

/** The secret of that use (32 bytes), made and stored first if no node has made it yet. */
export async function instanceSecret(ctx: Pick<ServiceContext, 'store' | 'vault' | 'clock'>, name: InstanceSecretName): Promise<Buffer> {
  let sealed = await ctx.store.instanceSecrets.find(name);
  if (!sealed) {
    const made = ctx.vault.seal(randomBytes(32).toString('base64'), instanceSecretAad(name));
    // Two nodes making it at once: the first insert wins and both read it back.
    await ctx.store.instanceSecrets.addIfAbsent(name, made, ctx.clock.now().toISOString());
    sealed = await ctx.store.instanceSecrets.find(name);
    if (!sealed) throw new Error(`the instance secret ${name} was not stored`);
  }
  return Buffer.from(ctx.vault.open(sealed, instanceSecretAad(name)), 'base64');
}
