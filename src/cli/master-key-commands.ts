/** `keyward master-key rotate`: re-seals every stored secret under the current master key. */
import { rotateMasterKey } from '../services/sealing/master-key-rotation.js';
import { type Command, count, optional } from './commands.js';

export const commands: Record<string, Command> = {
  'master-key rotate': {
    usage: 'master-key rotate [--batch-size N] [--max-batches N]',
    options: { 'batch-size': { type: 'string' }, 'max-batches': { type: 'string' } },
    run: async (ctx, o) => ({
      ...(await rotateMasterKey(ctx, {
        batchSize: count(optional(o, 'batch-size'), 'batch-size'),
        maxBatches: count(optional(o, 'max-batches'), 'max-batches'),
      })),
    }),
    text: (r) =>
      `Resealed ${r.resealed} values under the current master key; ${r.remaining} remain.\n` +
      (r.remaining === 0
        ? 'The old master keys are retired: remove KEYWARD_OLD_MASTER_KEYS from every node.'
        : 'Run it again (values changed meanwhile, or were sealed under a key not given in KEYWARD_OLD_MASTER_KEYS).'),
  },
};
