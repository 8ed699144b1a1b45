/**
 * The unit of work: every write of a use case, and the idempotent response of the request it
 * serves, commit in one durable transaction (docs/unit-of-work.md).
 *
 * A use case reads top-down in three phases: async *prepare* (load, engine, audio, provider
 * calls) → one synchronous write step `uow.run(scope, (tx) => …)` doing every write → *after*
 * (memory, pins, background work), which runs only when the step ran and committed. `tx` is a
 * token proving the code runs inside the write transaction; a function that writes takes it
 * first and is named `…Tx(tx, …)`, and a use case composes with another by calling its
 * `…Tx` function inside its own step.
 *
 * Idempotency (docs/api-decisions.md "Idempotency") lives here, not in the use cases: the
 * HTTP layer turns a request's `Idempotency-Key` into a {@link Scope} ({@link UnitOfWork.begin}
 * peeks or claims the key), {@link UnitOfWork.run} stores the response with the step's writes
 * (or replays the stored one instead of running the step), and {@link UnitOfWork.settle} /
 * {@link UnitOfWork.abandon} store an error response or release a claim. A use case never
 * sees the key or the fingerprint: a dial's exactly-once guard gets an opaque
 * {@link DialAttempt}.
 */
import { isErrorCode } from '../domain/errors.js';
import type { Store, WriteOptions } from '../store/index.js';
import { isStorableStatus, type IdempotencyService } from './idempotency.js';

declare const inWrite: unique symbol;

/**
 * Proof that code runs inside the unit of work's write transaction (inside `Store.write`): only
 * {@link UnitOfWork.run} and {@link UnitOfWork.write} make one, and hand it to their step.
 */
export interface Tx {
  readonly [inWrite]: true;
}

/** The one token: it carries no data, only the type's promise. */
const TX = Object.freeze({}) as Tx;

/** What a request's write step came to, ready to send: the status, the JSON body, and whether it is a stored replay. */
export interface Outcome {
  status: number;
  /** The response body, serialized JSON. */
  body: string;
  /** True when this is the stored response of an earlier identical request (the step did not run). */
  replayed: boolean;
}

/** A request's write: a replay (the step did not run), or the step's value with the response stored beside it. */
export type Committed<V> = (Outcome & { replayed: true }) | (Outcome & { replayed: false; value: V });

/**
 * One attempt at an action a client may retry (a dial): opaque to the use case, stored on
 * what the attempt made so a retry of it is recognised. `id` is the same on every retry of the
 * attempt; `request` says which request was made under it (another request under the same id
 * is a misuse of the id).
 */
export interface DialAttempt {
  readonly id: string;
  readonly request: string;
}

/** How a route treats its key: checked with the writes (`atomic`), or claimed in a committed write before the handler runs (`claim-first`). */
export type IdempotencyMode = 'claim-first' | 'atomic';

const KEY = Symbol('idempotency key');
const PRINT = Symbol('request fingerprint');

/**
 * A request's `Idempotency-Key` as {@link UnitOfWork.begin} left it: checked (`pending`, an
 * atomic route) or claimed (`claimed`, a claim-first route). The key and fingerprint are the
 * unit of work's own.
 */
export class IdempotencyClaim {
  /** True once the response (or the release of the claim) has been written. */
  settled = false;
  readonly [KEY]: string;
  readonly [PRINT]: string;

  constructor(
    readonly tenantId: string,
    key: string,
    print: string,
    readonly state: 'pending' | 'claimed',
  ) {
    this[KEY] = key;
    this[PRINT] = print;
  }

  /** The dial attempt this request makes (see {@link DialAttempt}). */
  get attempt(): DialAttempt {
    return { id: this[KEY], request: this[PRINT] };
  }
}

/** What a request asks of the unit of work: the status of success, its idempotency claim, and the check of its response shape. */
export interface Scope {
  /** The status a success answers with (201 for a create). */
  readonly status: number;
  /** The request's key, or null when it sent none (or is not a request at all). */
  readonly idempotency: IdempotencyClaim | null;
  /**
   * Checks a view against the response's documented shape and returns what is sent, or null
   * for no check.
   * @throws Error when the view is not in the documented shape.
   */
  readonly check: ((view: unknown) => unknown) | null;
}

/** The scope of work no request asked for (a media stream's turn, a webhook's call end, start-up recovery). */
export const INTERNAL: Scope = Object.freeze({ status: 200, idempotency: null, check: null });

/** The dial attempt of `scope`, or null when the request carried no key. */
export function attemptOf(scope: Scope): DialAttempt | null {
  return scope.idempotency?.attempt ?? null;
}

/** What {@link UnitOfWork.begin} found: a stored response to replay, or the claim the request runs under. */
export type Begun = { replay: Outcome } | { claim: IdempotencyClaim };

function errorCodeOf(body: string): string | undefined {
  if (!body.startsWith('{"error"')) return undefined;
  try {
    const code = (JSON.parse(body) as { error?: { code?: unknown } }).error?.code;
    return isErrorCode(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

/** How {@link UnitOfWork.run} writes: the store's options, and how the response is stored. */
export interface RunOptions extends WriteOptions {
  /**
   * Store the response as it is, however long (default: a long one is deflated). For the hot
   * write of a text turn, where deflating each response cost more throughput than the bytes it
   * saves are worth (docs/api-decisions.md "Idempotency"); the replay is the same either way.
   */
  plainBody?: boolean;
  /**
   * Store the response sealed (encrypted, see `BodyStorage` in idempotency.ts): for a response
   * that carries a secret shown once, which the database must not hold in the clear.
   */
  sealBody?: boolean;
}

/** The unit of work over one store (see the file's header). */
export class UnitOfWork {
  constructor(
    private readonly store: Store,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * Checks (atomic) or claims (claim-first) a request's key before its handler runs. A stored
   * response is returned to replay once it is durable, as its first sender did.
   * @throws ApiError idempotency_key_reuse, idempotency_key_in_progress.
   */
  async begin(tenantId: string, key: string, print: string, mode: IdempotencyMode): Promise<Begun> {
    const service = this.idempotency;
    // An atomic route only looks here; its key is recorded with its writes. The look goes in a
    // read batch (one transaction for the reads of this tick), which never waits for a sync.
    const outcome =
      mode === 'atomic'
        ? await this.store.read(() => service.peek(tenantId, key, print))
        : await this.store.write(() => service.claimTx(tenantId, key, print));
    if (outcome.kind === 'replay') {
      // The stored response may belong to a commit whose sync is still running.
      await this.store.whenDurable();
      return { replay: { status: outcome.status, body: outcome.body, replayed: true } };
    }
    return { claim: new IdempotencyClaim(tenantId, key, print, outcome.kind === 'claimed' ? 'claimed' : 'pending') };
  }

  /**
   * Runs a request's write step and stores its response under the request's key in the same
   * durable transaction. On an atomic route the key is checked there too; if an identical
   * request committed first, its stored response is returned instead and `step` does not run.
   * @param step Synchronous writes returning the response view (`scope.status`).
   * @param options `savepoint: false` for a hot step that cannot fail once it has written (see
   *        `WriteOptions`); `plainBody: true` to store its response as it is (see {@link RunOptions}).
   * @throws whatever `step` throws (nothing it wrote is kept), the idempotency errors, the store's.
   */
  async run<V>(scope: Scope, step: (tx: Tx) => V, options: RunOptions = {}): Promise<Committed<V>> {
    const claim = scope.idempotency !== null && !scope.idempotency.settled ? scope.idempotency : null;
    const { status, check } = scope;
    const storage = options.sealBody === true ? 'sealed' : options.plainBody === true ? 'plain' : 'deflated';
    const service = this.idempotency;
    const result = await this.store.write((): Committed<V> => {
      // An atomic route's key is checked here and its response recorded in the same
      // transaction: one row written, never a claim.
      const pending = claim !== null && claim.state === 'pending';
      if (pending) {
        const found = service.peek(claim.tenantId, claim[KEY], claim[PRINT]);
        if (found.kind === 'replay') return { status: found.status, body: found.body, replayed: true };
      }
      const value = step(TX);
      const body = JSON.stringify(check === null ? value : check(value));
      if (pending) service.completeTx(claim.tenantId, claim[KEY], claim[PRINT], status, body, storage);
      else if (claim !== null) service.storeTx(claim.tenantId, claim[KEY], claim[PRINT], status, body, storage);
      return { status, body, replayed: false, value };
    }, options);
    if (claim !== null) claim.settled = true;
    return result;
  }

  /**
   * The stored response of a request whose key an identical request has answered since this one
   * was checked (an atomic route's key is only looked at before its handler runs), or null. A use
   * case calls it before costly work it must not repeat (a language-model call), under the lock
   * the identical request also takes; {@link run} checks again with its writes.
   */
  async replayOf(scope: Scope): Promise<(Outcome & { replayed: true }) | null> {
    const claim = scope.idempotency;
    if (claim === null || claim.settled || claim.state !== 'pending') return null;
    const service = this.idempotency;
    const found = await this.store.read(() => service.peek(claim.tenantId, claim[KEY], claim[PRINT]));
    if (found.kind !== 'replay') return null;
    await this.store.whenDurable();
    return { status: found.status, body: found.body, replayed: true };
  }

  /**
   * Runs a write step that answers no request (background work, a webhook's processing, a
   * step of a use case before the provider is contacted).
   * @throws whatever `step` throws (nothing it wrote is kept), the store's errors.
   */
  write<T>(step: (tx: Tx) => T, options: WriteOptions = {}): Promise<T> {
    return this.store.write(() => step(TX), options);
  }

  /**
   * Runs a write step at once, outside the write queue (start-up, before requests are served).
   * @throws whatever `step` throws (nothing it wrote is kept), the store's errors.
   */
  writeNow<T>(step: (tx: Tx) => T): T {
    return this.store.writeNow(() => step(TX));
  }

  /**
   * The request ended with a response `run` did not store (an error, or a handler that wrote
   * nothing): it is stored under the key, or the claim released for a status that is never
   * stored (5xx, 429, 401, the idempotency errors). Null when there is nothing to write.
   * @param body The serialized response, or null when it is not a string.
   */
  settle(claim: IdempotencyClaim, status: number, body: string | null): Promise<void> | null {
    if (claim.settled) return null;
    claim.settled = true;
    const service = this.idempotency;
    if (body !== null && isStorableStatus(status, errorCodeOf(body))) {
      return this.store.write(() => service.storeTx(claim.tenantId, claim[KEY], claim[PRINT], status, body));
    }
    if (claim.state === 'claimed') return this.store.write(() => service.releaseTx(claim.tenantId, claim[KEY]));
    return null;
  }

  /** The request ended without a response sent (the client went away): its claim is released. Null when there is nothing to write. */
  abandon(claim: IdempotencyClaim): Promise<void> | null {
    if (claim.settled) return null;
    claim.settled = true;
    if (claim.state !== 'claimed') return null;
    return this.store.write(() => this.idempotency.releaseTx(claim.tenantId, claim[KEY]));
  }
}
