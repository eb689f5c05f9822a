/** The installation's own random secrets (table `instance_secrets`), sealed by the caller. */
import { Repository } from './repository.js';

export class InstanceSecretsRepository extends Repository {
  async find(name: string): Promise<Uint8Array | undefined> {
    const row = await this.db.selectFrom('instance_secrets').select('secret').where('name', '=', name).executeTakeFirst();
    return row?.secret;
  }

  /** Stores the secret unless one of that name is there already (another node was first): the stored one wins. */
  async addIfAbsent(name: string, secret: Uint8Array, now: string): Promise<void> {
    await this.db
      .insertInto('instance_secrets')
      .values({ name, secret, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
  }
}
