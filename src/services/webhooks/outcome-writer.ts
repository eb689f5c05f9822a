/**
 * The outcomes of webhook attempts, written in batches: those that end close together are written
 * together (at most `perBatch`; one statement on PostgreSQL, one transaction on SQLite: settleAll),
 * one batch at a time, each at the event-loop turn after it was asked for. Each outcome is fenced by
 * its lease: the message's next state is written only where this node still holds it, and the attempt
 * only with it.
 */
import type { MessageOutcome } from '../../store/webhook-delivery-repository.js';
import type { ServiceContext } from '../context.js';
import type { MessageSettlement } from './webhook-retry-policy.js';

/** An attempt's row, as the repository writes it with its outcome. */
type AttemptRecord = MessageOutcome['attempt'];

interface Outcome {
  messageId: string;
  settlement: MessageSettlement;
  attempt: AttemptRecord;
  written(wrote: boolean): void;
  failed(error: Error): void;
}

export class OutcomeWriter {
  readonly #ctx: ServiceContext;
  readonly #holder: string;
  readonly #perBatch: number;
  readonly #afterBatch: () => void;
  readonly #waiting: Outcome[] = [];
  #writing = false;
  #unwritten = 0;

  /** `holder` names this node on its leases; `afterBatch` runs once a batch is written or failed. */
  constructor(ctx: ServiceContext, holder: string, perBatch: number, afterBatch: () => void) {
    this.#ctx = ctx;
    this.#holder = holder;
    this.#perBatch = perBatch;
    this.#afterBatch = afterBatch;
  }

  /** Outcomes waiting or being written. */
  get unwritten(): number {
    return this.#unwritten;
  }

  /**
   * Resolves once written: true, or false where the lease ran out meanwhile (nothing written, the
   * attempt included: another node owns the message now and sends it again, at least once). Rejects
   * where the batch's transaction failed.
   */
  write(messageId: string, settlement: MessageSettlement, attempt: AttemptRecord): Promise<boolean> {
    this.#unwritten += 1;
    return new Promise((resolve, reject) => {
      this.#waiting.push({ messageId, settlement, attempt, written: resolve, failed: reject });
      this.#writeSoon();
    });
  }

  #writeSoon(): void {
    if (this.#writing) return;
    this.#writing = true;
    setImmediate(() => {
      this.#writeBatch().finally(() => {
        this.#writing = false;
        if (this.#waiting.length > 0) this.#writeSoon();
      });
    });
  }

  async #writeBatch(): Promise<void> {
    const batch = this.#waiting.splice(0, this.#perBatch);
    let written: boolean[];
    try {
      written = await this.#ctx.store.webhookDelivery.settleAll(this.#holder, batch);
    } catch (error) {
      // Nothing of the batch was written: each message keeps its lease until it runs out, and is then
      // sent again (at least once). Each attempt reports the failure, as it did when written alone.
      for (const outcome of batch) outcome.failed(error as Error);
      return;
    } finally {
      this.#unwritten -= batch.length;
      this.#afterBatch();
    }
    for (const [i, outcome] of batch.entries()) outcome.written(written[i]!);
  }
}
