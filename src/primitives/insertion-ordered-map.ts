/**
 * A map that keeps its entries in the order they were last set and finds the oldest in constant
 * time, for the in-memory structures that drop their oldest entries as they go (the per-address
 * counters, the guard's cached keys, the proxy's kept reads).
 *
 * A plain Map is insertion-ordered too, but its first entry is not found in constant time: after many
 * deletions at its front, V8 walks over the holes they leave on every keys().next() until the table is
 * rebuilt (measured: a Map of 100,000 entries used this way slows from microseconds to milliseconds a
 * call). Here a queue of (key, slot) records gives the order; a record whose slot is no longer the
 * key's (the entry was deleted or set again) is skipped once, when it reaches the front.
 */
interface Slot<V> {
  value: V;
}

/** Records consumed at the queue's front before it is copied down (amortised constant cost). */
const COMPACT_AFTER = 1024;

export class InsertionOrderedMap<V> {
  readonly #slots = new Map<string, Slot<V>>();
  #queue: ({ key: string; slot: Slot<V> } | undefined)[] = [];
  #head = 0;

  get size(): number {
    return this.#slots.size;
  }

  get(key: string): V | undefined {
    return this.#slots.get(key)?.value;
  }

  /** Sets the key's value and makes it the newest entry, whether or not it was there before. */
  set(key: string, value: V): void {
    const slot = { value };
    this.#slots.set(key, slot);
    this.#queue.push({ key, slot });
  }

  delete(key: string): void {
    this.#slots.delete(key);
  }

  clear(): void {
    this.#slots.clear();
    this.#queue = [];
    this.#head = 0;
  }

  /** Every entry, in no particular order. */
  *entries(): IterableIterator<[key: string, value: V]> {
    for (const [key, slot] of this.#slots) yield [key, slot.value];
  }

  /** The entry set longest ago, or undefined when the map is empty. */
  oldest(): [key: string, value: V] | undefined {
    while (this.#head < this.#queue.length) {
      const record = this.#queue[this.#head]!;
      if (this.#slots.get(record.key) === record.slot) return [record.key, record.slot.value];
      this.#queue[this.#head] = undefined;
      this.#head += 1;
      if (this.#head >= COMPACT_AFTER && this.#head * 2 >= this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
    }
    return undefined;
  }
}

/** At most `capacity` entries: setting one more drops the oldest. */
export class BoundedMap<V> extends InsertionOrderedMap<V> {
  constructor(private readonly capacity: number) {
    super();
  }

  override set(key: string, value: V): void {
    if (this.size >= this.capacity && this.get(key) === undefined) this.delete(this.oldest()![0]);
    super.set(key, value);
  }
}

/**
 * Empties `map` every `ms`: for a cache whose entries must not outlive a bound however quiet the
 * process is. The timer holds the map weakly and is unref'd, so it keeps neither the map alive nor the
 * process running; it stops at its first tick after the map is gone.
 */
export function clearEvery(map: { clear(): void }, ms: number): void {
  const held = new WeakRef(map);
  const timer = setInterval(() => {
    const kept = held.deref();
    if (kept) kept.clear();
    else clearInterval(timer);
  }, ms);
  timer.unref();
}
