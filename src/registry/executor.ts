import { createHash } from 'node:crypto';
import type DataLoader from 'dataloader';
import { can, type Principal } from '../auth/keys.js';
import type { Config } from '../config.js';
import { AppError, invalid } from '../errors.js';
import type { Logger } from '../logger.js';
import { naturalBatches } from '../batching.js';
import type { Links } from '../domain/links.js';
import type { Store, Tx } from '../store/store.js';
import {
  acceptsIdempotencyKey,
  isReadOnly,
  successStatus,
  type DeliveryKicker,
  type Operation,
  type OperationContext,
} from './operation.js';
import { guardInput } from './inputGuard.js';
import { inputError } from './validation.js';

export interface Outcome {
  status: number;
  body: unknown;
  /** True when an idempotency key replayed a stored response. */
  replayed: boolean;
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** At most this many calls share a unit of work (`Operation.coalesce`). */
const MAX_COALESCED = 1000;

/** A call waiting to share a unit of work with others of its operation. */
interface Call {
  principal: Principal;
  input: Record<string, unknown>;
}

/** What a batch answers for a call that failed: an Error, which rejects only that call. */
const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Who may call the operation at all: API keys by permission, customer tokens by the operation's customer access. */
function authorize(op: Operation, principal: Principal): void {
  if (principal.kind === 'anonymous') {
    if (op.authentication !== 'none') {
      throw new AppError('unauthorized', 'Missing API key: send the header Authorization: Bearer <API key>');
    }
    return;
  }
  if (principal.kind === 'customer') {
    const access = op.customerAccess;
    if (!access || !principal.permissions.includes(access.permission)) {
      throw new AppError(
        'forbidden',
        `A customer token reaches only its own account, subscriptions, e-mail addresses and payment methods; ${op.name} is not available to it`,
      );
    }
    return;
  }
  if (op.permission && !can(principal, op.permission)) {
    throw new AppError('forbidden', `This token lacks the permission ${op.permission} that ${op.name} requires`);
  }
}

/**
 * A customer token's input without its customer field names the token's own customer: filled in
 * before validation, so that a field the schema requires (`get_customer`'s `id`) may be left out.
 */
function withOwnCustomer(op: Operation, principal: Principal, raw: Record<string, unknown>): Record<string, unknown> {
  const field = op.customerAccess?.customerField;
  if (principal.kind !== 'customer' || !field || raw[field] !== undefined) return raw;
  return { ...raw, [field]: principal.customerId };
}

/**
 * A customer token's call names its own customer, by id or number (`withOwnCustomer` when absent), and
 * always passes it on as the id; another customer's id or number is a 404.
 */
function confineToCustomer(op: Operation, principal: Principal, input: Record<string, unknown>): void {
  const field = op.customerAccess?.customerField;
  if (principal.kind !== 'customer' || !field) return;
  const named = input[field];
  if (named !== undefined && named !== principal.customerId && named !== principal.customerNumber) {
    throw new AppError('not_found', `Customer ${String(named)} was not found`);
  }
  input[field] = principal.customerId;
}

/** The `tx` of an operation that opens its own units of work: any use is a programming error. */
const NO_UNIT = new Proxy({} as Tx, {
  get(_target, repo) {
    throw new Error(`this operation opens its own units of work through ctx.store; it has no ctx.tx (used ctx.tx.${String(repo)})`);
  },
});

/**
 * Runs one operation for one principal: permission, input validation, idempotency, the unit of work
 * (a transaction for writes), after-commit effects. Every surface (MCP, REST) calls this.
 */
export class Executor {
  private readonly inFlight = new Set<string>();
  /** Per operation with `coalesce`: its calls, gathered into units (`naturalBatches`). */
  private readonly coalescers = new Map<Operation, DataLoader<Call, Outcome>>();

  constructor(
    private readonly deps: {
      store: Store;
      config: Config;
      logger: Logger;
      clock: () => Date;
      deliveries: DeliveryKicker;
      /** Base of the URLs results link to (`OperationContext.baseUrl`). */
      baseUrl: () => string;
      /** The links results carry (`OperationContext.links`), under `baseUrl`. */
      links: () => Promise<Links>;
    },
  ) {}

  async execute(
    op: Operation,
    principal: Principal,
    raw: Record<string, unknown>,
    /** As the surface checked it (`checkIdempotencyKey`). */
    idempotencyKey?: string | undefined,
  ): Promise<Outcome> {
    authorize(op, principal);
    const kind = op.method === 'GET' ? 'bad_request' : 'validation';
    // Before anything else reads the input: a reserved key (`__proto__`, …) anywhere, or input nested
    // or sized beyond the limits, never reaches zod, the idempotency hash or a handler.
    guardInput(raw, kind);
    const parsed = op.input.safeParse(withOwnCustomer(op, principal, raw));
    if (!parsed.success) throw inputError(parsed.error, kind, op.input);
    const input = parsed.data as Record<string, unknown>;
    confineToCustomer(op, principal, input);

    if (idempotencyKey !== undefined && acceptsIdempotencyKey(op)) {
      return this.idempotent(op, principal, input, idempotencyKey);
    }
    if (op.coalesce && principal.kind === 'api_key' && (op.coalesce.when?.(input) ?? true)) return this.coalesced(op, principal, input);
    return this.run(op, principal, input);
  }

  private async run(
    op: Operation,
    principal: Principal,
    input: Record<string, unknown>,
    around?: (tx: Tx, body: () => Promise<Outcome>) => Promise<Outcome>,
  ): Promise<Outcome> {
    return this.unitOfWork(
      op,
      principal,
      async (ctx) => {
        const result = await op.handler(ctx, input);
        const owner = op.customerAccess?.resultCustomer;
        if (principal.kind === 'customer' && owner && owner(result as never) !== principal.customerId) {
          throw new AppError('not_found', `${String(input.id ?? 'The resource')} was not found`);
        }
        return { status: successStatus(op), body: result, replayed: false };
      },
      around,
    );
  }

  /** Runs `work` in the operation's unit of work (a transaction for writes), then its after-commit effects. */
  private async unitOfWork<T>(
    op: Operation,
    principal: Principal,
    work: (ctx: OperationContext) => Promise<T>,
    around?: (tx: Tx, body: () => Promise<T>) => Promise<T>,
  ): Promise<T> {
    const effects: Array<() => void> = [];
    const now = this.deps.clock();
    const baseUrl = this.deps.baseUrl();
    const links = await this.deps.links();
    const body = (tx: Tx): Promise<T> =>
      work({
        tx,
        principal,
        org: principal.organisationId,
        now,
        config: this.deps.config,
        logger: this.deps.logger,
        afterCommit: (fn) => effects.push(fn),
        deliveries: this.deps.deliveries,
        store: this.deps.store,
        baseUrl,
        links,
      });
    const unit = (tx: Tx) => (around ? around(tx, () => body(tx)) : body(tx));
    if (op.dryRun) return this.deps.store.transaction(unit, { rollback: true });
    const outcome = op.ownUnitsOfWork
      ? await unit(NO_UNIT)
      : isReadOnly(op)
        ? await this.deps.store.read(unit)
        : await this.deps.store.transaction(unit, op.serializeOn ? { serializeOn: `${op.serializeOn}:${principal.organisationId}` } : undefined);
    for (const fn of effects) {
      try {
        fn();
      } catch (err) {
        this.deps.logger.error({ err, operation: op.name }, 'after-commit effect failed');
      }
    }
    return outcome;
  }

  /** A call of an operation with `coalesce`: it joins the next unit its operation runs for calls that arrived together. */
  private coalesced(op: Operation, principal: Principal, input: Record<string, unknown>): Promise<Outcome> {
    let calls = this.coalescers.get(op);
    if (!calls) {
      calls = naturalBatches((together) => this.runTogether(op, together), MAX_COALESCED);
      this.coalescers.set(op, calls);
    }
    return calls.load({ principal, input });
  }

  /** Calls that arrived together: one unit of work per organisation among them. */
  private async runTogether(op: Operation, calls: readonly Call[]): Promise<Array<Outcome | Error>> {
    const byOrg = new Map<string, number[]>();
    calls.forEach((call, i) => {
      const org = call.principal.organisationId;
      const indexes = byOrg.get(org);
      if (indexes) indexes.push(i);
      else byOrg.set(org, [i]);
    });
    const outcomes: Array<Outcome | Error> = [];
    await Promise.all(
      [...byOrg.values()].map(async (indexes) => {
        const answers = await this.oneUnit(op, indexes.map((i) => calls[i] as Call));
        indexes.forEach((i, k) => (outcomes[i] = answers[k] as Outcome | Error));
      }),
    );
    return outcomes;
  }

  /**
   * One unit of work for calls of one organisation, each answered with its result or its own error.
   * When the unit fails as a whole (the database refused it), each call runs again alone, so that no
   * call fails for another's sake; when the database is unavailable (busy past its lock timeout, or
   * aborting the unit for concurrent ones past its attempts), every call gets that answer at once, as
   * it would alone, instead of waiting for it once more each.
   */
  private async oneUnit(op: Operation, calls: readonly Call[]): Promise<Array<Outcome | Error>> {
    const status = successStatus(op);
    try {
      const results = await this.unitOfWork(op, (calls[0] as Call).principal, (ctx) => op.coalesce!.run(ctx, calls.map((c) => c.input)));
      return results.map((r) => (r instanceof Error ? r : { status, body: r, replayed: false }));
    } catch (err) {
      if (calls.length === 1 || (err instanceof AppError && err.kind === 'unavailable')) return calls.map(() => asError(err));
      return Promise.all(calls.map((c) => this.run(op, c.principal, c.input).catch(asError)));
    }
  }

  private async idempotent(
    op: Operation,
    principal: Principal,
    input: Record<string, unknown>,
    key: string,
  ): Promise<Outcome> {
    const org = principal.organisationId;
    const slot = `${org}\u0000${key}`;
    if (this.inFlight.has(slot)) {
      throw new AppError('conflict', `A request with the idempotency key '${key}' is still being processed; retry after it completes`);
    }
    const requestHash = createHash('sha256').update(`${op.name}\u0000${stableStringify(input)}`).digest('hex');
    this.inFlight.add(slot);
    try {
      return await this.run(op, principal, input, async (tx, body) => {
        const now = this.deps.clock();
        const previous = await tx.system.getIdempotency(org, key);
        if (previous && now.getTime() - Date.parse(previous.createdAt) < IDEMPOTENCY_TTL_MS) {
          if (previous.operation !== op.name || previous.requestHash !== requestHash) {
            throw invalid(
              'idempotencyKey',
              `The idempotency key '${key}' was already used for a different request (${previous.operation}); use a new key for a new request`,
              'idempotency_key_reused',
            );
          }
          return { status: previous.responseStatus, body: JSON.parse(previous.responseBody) as unknown, replayed: true };
        }
        const outcome = await body();
        await tx.system.saveIdempotency(org, key, {
          operation: op.name,
          requestHash,
          responseStatus: outcome.status,
          responseBody: JSON.stringify(outcome.body ?? null),
          createdAt: now.toISOString(),
        });
        return outcome;
      });
    } finally {
      this.inFlight.delete(slot);
    }
  }
}
