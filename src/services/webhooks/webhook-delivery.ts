/**
 * Delivery of the outbox (CONTRACT 7): at least once, by one node at a time, signed per Standard
 * Webhooks, retried on a schedule for 24 hours.
 *
 * Every node runs a dispatcher. A message is sent by the node that leased it (a guarded UPDATE; FOR
 * UPDATE SKIP LOCKED on PostgreSQL), and every write about the attempt is fenced by that lease. A
 * node that dies mid-send leaves a lease that runs out; the message is then due again, and sent again
 * with the same webhook-id (at least once: a receiver dedupes on it).
 *
 * Concurrency is bounded per node overall, per account and per endpoint, and claims go round the
 * accounts and their endpoints with something due, so a slow or dead endpoint holds at most its own
 * few slots, and an account's many dead endpoints at most the account's share: other accounts'
 * messages go on, and no API request or callback ever waits on a delivery (they only write the outbox).
 * The shares are this node's: each node bounds what it sends, and the leases decide who sends what.
 * For an endpoint that answers quickly, a few messages beyond its free slots are claimed and held, to
 * start as its slots free without a claim each (claimed-ahead.ts).
 */
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { OutboundError, type OutboundHttp } from '../../outbound/outbound-http.js';
import { addSeconds, iso } from '../../primitives/clock.js';
import { newId } from '../../primitives/ids.js';
import type { DeliveryTargetRow } from '../../store/webhook-delivery-repository.js';
import type { ServiceContext } from '../context.js';
import { ClaimedAhead } from './claimed-ahead.js';
import { DeliverySlots } from './delivery-slots.js';
import { DueEndpointList } from './due-endpoints.js';
import { OutcomeWriter } from './outcome-writer.js';
import { TurnGate } from './turn-gate.js';
import { type AttemptResult, answered, nextState, ours, retryAfterSeconds, unanswered, WEBHOOK_TIMEOUT_MS } from './webhook-retry-policy.js';
import { webhookKey, webhookSecretAad, webhookSignature } from './webhook-signing.js';

/** Beyond the timeout, the time a sender may need to write the outcome back. */
const LEASE_MARGIN_SECONDS = 5;

/**
 * The dispatcher works in small pieces, each in an event-loop turn of its own (setImmediate), so
 * that the API's requests, which arrive as I/O, are answered between them instead of queueing
 * behind a whole backlog's work: at most this many sends are started, and this many outcomes
 * written (together, in one statement or transaction), a turn.
 */
const SENDS_PER_TURN = 8;
const WRITES_PER_TURN = 32;

/**
 * Claiming ahead (claimed-ahead.ts): an endpoint whose last call from this node was delivered within
 * quickAnswerMs gets up to perEndpoint messages claimed beyond its free slots (at most perAccount held
 * for one account, maxInFlight for the node), held at most HELD_MAX_MS from the claim. A claim that
 * holds some leases all it claims that much longer, so that a held message started late still has the
 * full margin to write its outcome in. An endpoint that has not answered yet, answers slowly, fails or
 * does not answer is claimed for its free slots only: held messages would only wait, leased, where
 * another node could have sent them.
 */
export const HELD_MAX_MS = 2_000;
/**
 * A held message started later than this after its claim is sent with the endpoint's URL and secrets
 * read again, not as read beside the claim: an endpoint removed or a secret revoked meanwhile is then
 * seen, as it would be by a message claimed now.
 */
const TARGET_FRESH_MS = 100;

export interface DispatcherLimits {
  /** Attempts in flight on this node, all endpoints together. */
  maxInFlight: number;
  /**
   * Attempts in flight on this node to the endpoints of one account, all its servers together: what
   * one tenant's endpoints that never answer can hold (each until its timeout) while others' go on.
   */
  perAccount: number;
  /** Attempts in flight on this node to one endpoint. */
  perEndpoint: number;
  /** How often the node looks for due messages when nothing else wakes it. */
  pollMs: number;
  /** An endpoint whose last call was delivered within this is claimed ahead for (HELD_MAX_MS). */
  quickAnswerMs: number;
}

export const DEFAULT_DISPATCHER_LIMITS: DispatcherLimits = { maxInFlight: 32, perAccount: 8, perEndpoint: 4, pollMs: 500, quickAnswerMs: 250 };

/** Where the messages claimed together go, read once for all of them: the URL and the live secrets' HMAC keys. */
type Target = { url: string; keys: Buffer[] } | { url: string; unreadable: Error };

type Claimed = Awaited<ReturnType<ServiceContext['store']['webhookDelivery']['claim']>>[number];

export interface DispatcherEvents {
  /** An attempt or a round failed in a way that is Keyward's, not the endpoint's (a database error). */
  onError?(error: Error): void;
}

export class WebhookDispatcher {
  readonly #ctx: ServiceContext;
  readonly #outbound: OutboundHttp;
  readonly #limits: DispatcherLimits;
  readonly #events: DispatcherEvents;
  /** This node's name on the leases it takes. */
  readonly #holder = randomUUID();
  /** What this node has in flight, and the room left per endpoint and per account (delivery-slots.ts). */
  readonly #slots: DeliverySlots;
  /**
   * Endpoints whose last call from this node was delivered within quickAnswerMs: they are claimed ahead
   * for. An endpoint with nothing in flight or held leaves it at the next poll, so it holds only the
   * endpoints being delivered to.
   */
  readonly #answersQuickly = new Set<string>();
  readonly #held = new ClaimedAhead<Claimed, Target | null>(HELD_MAX_MS);
  /** The attempts under way, and the held leases being given back: what stop() and drain() wait for. */
  readonly #running = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  /** Attempts this dispatcher has started, ever (drain() answers the difference). */
  #started = 0;
  #round: Promise<number> | null = null;
  #again = false;
  #timer: NodeJS.Timeout | null = null;
  #stopped = false;
  /** A round asked for by a freed slot, to run at the next turn (many slots freed together ask once). */
  #wakeAsked = false;
  /**
   * The attempts' outcomes, written in batches. A slot frees when its call ends, before its outcome
   * is written; claiming stops while maxInFlight outcomes wait, so a slow database cannot let them
   * pile up until their leases run out (another node would then send those messages again).
   */
  readonly #outcomes: OutcomeWriter;
  readonly #sends = new TurnGate(SENDS_PER_TURN);
  readonly #due = new DueEndpointList();

  constructor(ctx: ServiceContext, outbound: OutboundHttp, limits: Partial<DispatcherLimits> = {}, events: DispatcherEvents = {}) {
    this.#ctx = ctx;
    this.#outbound = outbound;
    this.#limits = { ...DEFAULT_DISPATCHER_LIMITS, ...limits };
    this.#events = events;
    this.#slots = new DeliverySlots(this.#limits);
    // Claiming may have stopped on the unwritten bound: it goes on at the next turn, not the next poll.
    this.#outcomes = new OutcomeWriter(ctx, this.#holder, WRITES_PER_TURN, () => {
      if (!this.#stopped) this.#wakeSoon();
    });
    // Every call under way listens to this one signal (stop aborts them all): up to maxInFlight
    // listeners is the design, not a leak for Node to warn about past its default of 10.
    setMaxListeners(this.#limits.maxInFlight + 1, this.#abort.signal);
  }

  /** Looks for due messages every pollMs until stop(). */
  start(): void {
    const tick = () => {
      if (this.#stopped) return;
      this.#due.forget();
      for (const endpointId of this.#answersQuickly) {
        if (!this.#slots.hasInFlight(endpointId) && this.#held.count(endpointId) === 0) this.#answersQuickly.delete(endpointId);
      }
      this.#wake();
      this.#timer = setTimeout(tick, this.#limits.pollMs);
      this.#timer.unref();
    };
    tick();
  }

  /**
   * Stops claiming, and aborts the attempts under way, giving their messages back (due at once, for
   * another node or this one restarted: at least once, since the endpoint may have got them). Resolves
   * once nothing of this dispatcher is running.
   */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#abort.abort();
    // A round's failure was reported to onError already; stopping goes on regardless.
    await this.#round?.catch(() => undefined);
    this.#giveBack(this.#held.dropAll());
    await Promise.allSettled([...this.#running]);
  }

  /**
   * One round, and every attempt it starts, again until nothing is due: what a test calls instead of
   * waiting. How many attempts were started meanwhile.
   *
   * It never joins a round already under way (one a finished attempt woke): that round read the clock
   * before the caller may have moved it, and would answer "nothing due" for what is due now.
   */
  async drain(): Promise<number> {
    const before = this.#started;
    for (;;) {
      while (this.#round) await this.#round.catch(() => 0);
      const started = await this.round();
      const stillNow = started === 0 && this.#running.size === 0 && !this.#round;
      if (stillNow && this.#held.size === 0 && !this.#wakeAsked) return this.#started - before;
      // Held messages, or a round a landed give-back asked for: the next turn's round sees them.
      if (stillNow) await new Promise((resolve) => setImmediate(resolve));
      else await Promise.allSettled([...this.#running]);
    }
  }

  /** Claims what this node has room for and starts sending it; how many attempts it started. */
  round(): Promise<number> {
    if (this.#round) {
      this.#again = true;
      return this.#round;
    }
    this.#round = this.#claimAndSend().finally(() => {
      this.#round = null;
      if (this.#again && !this.#stopped) {
        this.#again = false;
        this.#wake();
      }
    });
    return this.#round;
  }

  #wake(): void {
    this.round().catch((error: Error) => this.#events.onError?.(error));
  }

  /** #wake at the next turn, once however many ask before it. */
  #wakeSoon(): void {
    if (this.#wakeAsked) return;
    this.#wakeAsked = true;
    setImmediate(() => {
      this.#wakeAsked = false;
      if (!this.#stopped) this.#wake();
    });
  }

  async #claimAndSend(): Promise<number> {
    if (this.#stopped) return 0;
    let free = Math.min(this.#limits.maxInFlight - this.#slots.inFlight, this.#limits.maxInFlight - this.#outcomes.unwritten);
    const nowDate = this.#ctx.clock.now();
    const now = iso(nowDate);
    // What is held starts first: it is claimed already, and waits on nothing but a slot. What was held
    // too long is given back even where nothing can start.
    let started = this.#startHeld(Math.max(free, 0), nowDate);
    free -= started;
    if (free <= 0) return started;
    const busy = this.#slots.busy();
    let endpoints = this.#due.reusable(busy);
    const reused = endpoints !== null;
    if (!endpoints) {
      // As many as the node could claim from at most, not only what is free now: the rounds that
      // reuse the list may have more room.
      endpoints = await this.#ctx.store.webhookDelivery.dueEndpoints(now, busy, this.#limits.maxInFlight);
      this.#due.remember(endpoints, busy, endpoints.length < this.#limits.maxInFlight);
    }
    for (const { id: endpointId, accountId } of endpoints) {
      // Stopped meanwhile: what is claimed now would only wait for its lease to run out.
      if (this.#stopped) break;
      const room = Math.min(this.#slots.room(endpointId, accountId), free);
      if (room <= 0) continue;
      // What the endpoint held was started first (it has room), so it holds nothing now.
      const ahead = this.#answersQuickly.has(endpointId)
        ? Math.max(
            0,
            Math.min(this.#limits.perEndpoint, this.#limits.perAccount - this.#held.countOfAccount(accountId), this.#limits.maxInFlight - this.#held.size),
          )
        : 0;
      // The endpoint's URL and secrets are read beside the claim, not after it (on PostgreSQL, on
      // another of the pool's connections): one round trip's wait a claim instead of two.
      const targetRows = this.#ctx.store.webhookDelivery.deliveryTarget(endpointId, now);
      // Handled at once: it may fail while the claim is still under way, before anything awaits it (the
      // attempts still see the failure, through #target). Unhandled, it would end the thread.
      targetRows.catch(() => undefined);
      const until = leaseUntil(nowDate, ahead > 0 ? HELD_MAX_MS : 0);
      const claimed = await this.#ctx.store.webhookDelivery.claim(endpointId, room + ahead, { holder: this.#holder, until, now });
      if (claimed.length < room + ahead) this.#due.ranDry(endpointId);
      else this.#due.servedLast(endpointId);
      if (claimed.length === 0) continue;
      // Read once for the messages claimed together, which all go to this endpoint.
      const target = this.#target(endpointId, targetRows);
      const sending = claimed.slice(0, room);
      for (const message of sending) this.#start(message, accountId, target);
      // A call that ended slow or failed during the claim has given back what the endpoint held: what
      // this claim leased beyond the slots goes back too.
      if (this.#answersQuickly.has(endpointId)) this.#held.hold(endpointId, accountId, claimed.slice(room), target, nowDate.getTime());
      else this.#giveBack(claimed.slice(room));
      free -= sending.length;
      started += sending.length;
      if (free <= 0) break;
    }
    // A round that starts nothing has looked at the database afresh, not only at the kept list: drain()
    // and the poll rely on "nothing started" meaning nothing is due.
    if (started === 0 && reused && !this.#stopped) {
      this.#due.forget();
      return this.#claimAndSend();
    }
    return started;
  }

  /**
   * Starts held messages where their endpoint and account have room, at most `free`; gives back those
   * held too long. How many it started.
   */
  #startHeld(free: number, nowDate: Date): number {
    let started = 0;
    for (const { endpointId, accountId } of this.#held.endpoints()) {
      const { ready, expired } = this.#held.take(endpointId, Math.min(this.#slots.room(endpointId, accountId), free - started), nowDate.getTime());
      this.#giveBack(expired);
      let fresh: Promise<Target | null> | undefined;
      for (const { message, target, claimedAt } of ready) {
        if (nowDate.getTime() - claimedAt <= TARGET_FRESH_MS) this.#start(message, accountId, target);
        else {
          fresh ??= this.#target(endpointId, this.#ctx.store.webhookDelivery.deliveryTarget(endpointId, iso(nowDate)));
          this.#start(message, accountId, fresh);
        }
      }
      started += ready.length;
    }
    return started;
  }

  /**
   * Gives the leases of messages never sent back (due at once, for any node), without an attempt. Once
   * given back, the list of due endpoints is read afresh (they are due again) at the next turn's round.
   */
  #giveBack(messages: readonly Claimed[]): void {
    for (const message of messages) {
      const given: Promise<void> = this.#ctx.store.webhookDelivery
        .releaseLease(message.id, { holder: this.#holder, until: message.lease_until })
        .catch((error: Error) => this.#events.onError?.(error))
        .finally(() => {
          this.#running.delete(given);
          this.#due.forget();
          if (!this.#stopped) this.#wakeSoon();
        });
      this.#running.add(given);
    }
  }

  /** An endpoint slow or failing is no longer claimed ahead for: what it holds would only wait, leased, where another node could send it. */
  #slowOrFailing(endpointId: string): void {
    this.#answersQuickly.delete(endpointId);
    this.#giveBack(this.#held.drop(endpointId));
  }

  /**
   * The endpoint's URL and its live secrets, opened and decoded to HMAC keys once for the batch; null
   * where it was removed meanwhile (its messages went with it). Secrets that cannot be read or opened
   * are `unreadable`: the attempts fail on our side.
   */
  async #target(endpointId: string, read: Promise<DeliveryTargetRow[]>): Promise<Target | null> {
    const rows = await read;
    const endpoint = rows[0];
    if (!endpoint) return null;
    try {
      const keys: Buffer[] = [];
      for (const { secret_id, secret } of rows) {
        if (secret_id !== null && secret !== null) keys.push(webhookKey(this.#ctx.vault.open(secret, webhookSecretAad(secret_id, endpointId))));
      }
      return { url: endpoint.url, keys };
    } catch (error) {
      return { url: endpoint.url, unreadable: error as Error };
    }
  }

  #start(message: Claimed, accountId: string, target: Promise<Target | null>): void {
    this.#slots.take(message.endpoint_id, accountId);
    this.#started += 1;
    let freed = false;
    // The slot is the endpoint's and the account's share of calls under way: it frees as soon as the
    // call has ended, while the outcome is still being written (the lease keeps the message from
    // being claimed again meanwhile).
    const free = () => {
      if (freed) return;
      freed = true;
      this.#slots.free(message.endpoint_id, accountId);
      // A freed slot is taken at the next turn where more is due, not at the next poll.
      if (!this.#stopped) this.#wakeSoon();
    };
    const attempt = this.#attempt(message, target, free)
      .catch((error: Error) => this.#events.onError?.(error))
      .finally(() => {
        free();
        this.#running.delete(attempt);
      });
    this.#running.add(attempt);
  }

  async #attempt(message: Claimed, target: Promise<Target | null>, callEnded: () => void): Promise<void> {
    const { webhookDelivery } = this.#ctx.store;
    const startedAt = this.#ctx.clock.now();
    const endpoint = await target;
    if (!endpoint) {
      // Removed meanwhile: its messages, held ones included, went with it.
      this.#slots.clearUnresponsive(message.endpoint_id);
      this.#answersQuickly.delete(message.endpoint_id);
      this.#held.drop(message.endpoint_id);
      return;
    }
    if ('unreadable' in endpoint) {
      this.#events.onError?.(endpoint.unreadable);
      this.#slowOrFailing(message.endpoint_id);
      await this.#settle(message, ours(), 0, startedAt);
      return;
    }
    await this.#sends.pass();
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const began = performance.now();
    let result: AttemptResult;
    try {
      const answer = await this.#outbound.post(endpoint.url, {
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Keyward-Webhooks/1',
          'webhook-id': message.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': webhookSignature(endpoint.keys, message.id, timestamp, message.payload),
        },
        body: message.payload,
        signal: this.#abort.signal,
      });
      result = answered(answer.status, retryAfterSeconds(answer.header('retry-after'), startedAt));
    } catch (error) {
      if (this.#abort.signal.aborted) {
        await webhookDelivery.releaseLease(message.id, { holder: this.#holder, until: message.lease_until });
        return;
      }
      if (error instanceof OutboundError) result = unanswered(error);
      else {
        this.#events.onError?.(error as Error);
        result = ours();
      }
    }
    if (result.failure === 'timeout') this.#slots.markUnresponsive(message.endpoint_id);
    else this.#slots.clearUnresponsive(message.endpoint_id);
    const durationMs = Math.round(performance.now() - began);
    if (result.delivered && durationMs <= this.#limits.quickAnswerMs) this.#answersQuickly.add(message.endpoint_id);
    else this.#slowOrFailing(message.endpoint_id);
    const settled = this.#settle(message, result, durationMs, startedAt);
    callEnded();
    await settled;
  }

  /**
   * Writes the attempt and the message's next state together, if this node still holds the lease.
   * Where the lease ran out meanwhile, nothing is written, the attempt included: another node owns the
   * message now and sends it again (at least once), even if this attempt was a 2xx. Resolves once
   * written: the outcomes of attempts that end close together are written together (OutcomeWriter).
   */
  async #settle(message: Claimed, result: AttemptResult, durationMs: number, startedAt: Date): Promise<void> {
    const settlement = nextState(message, result, this.#ctx.clock.now());
    const written = await this.#outcomes.write(message.id, settlement, {
      id: newId('att', startedAt.getTime()),
      attempted_at: iso(startedAt),
      status_code: result.statusCode,
      error: result.error,
      duration_ms: durationMs,
    });
    // Counted once written: an attempt whose lease ran out is another node's to count.
    if (written) this.#ctx.observer?.webhookDelivery(settlement.status === 'delivered' ? 'delivered' : settlement.status === 'failed' ? 'failed' : 'retrying');
  }
}

/**
 * When a lease taken at `now` runs out: the call's timeout and the margin to write its outcome, and
 * `heldMs` more for messages claimed to be held before they are sent.
 */
function leaseUntil(now: Date, heldMs: number): string {
  return iso(addSeconds(now, (WEBHOOK_TIMEOUT_MS + heldMs) / 1000 + LEASE_MARGIN_SECONDS));
}
