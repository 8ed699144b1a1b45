/**
 * The daily spend budget of a tenant (`tenant_daily_budget_inr`; docs/api-decisions.md
 * "Costs"; docs/calls.md "The daily budget"). Spend of a day = the costs of the tenant's sessions created that day (day
 * boundary in the `timezone` setting); while a call's session is open it counts at least the
 * call's reservation, since its real cost is not known yet — until the call's longest possible
 * end (`max_call_duration_s` after it was placed), so an abandoned session does not hold
 * budget for ever. A tenant at or over its budget gets `rate_limit_exceeded`; one below it may
 * place a call. A budget of 0 turns the check off.
 *
 * The check before work ({@link BudgetService.check}) gives `rate_limit_exceeded` early; the
 * check inside the call's own write ({@link BudgetService.reserveTx}) makes check and
 * reservation atomic, so concurrent calls cannot overspend.
 *
 * Both read the spend through `CallRepo.spendMicro`: the running spend ledger the store keeps in
 * the same transaction as every cost and every open call's hold (migrations 7 and 10 in
 * src/store/migrations.ts), not a walk of the day's sessions or open calls, so a check costs the same however
 * many sessions the day holds and however many of its calls are open.
 */
import { ApiError } from '../domain/errors.js';
import { inrToMicro, microToInr } from '../domain/money.js';
import { dayBounds } from '../domain/time.js';
import type { ServiceDeps } from './context.js';

/** Budget settings of the instance. */
export interface BudgetSettings {
  /** Instance default in INR; 0 = no budget. A tenant's own value overrides it. */
  dailyBudgetInr: number;
  /** IANA zone of the day boundary. */
  timezone: string;
  /** INR each open call holds. */
  callReservationInr: number;
}

/** A tenant's budget position today, in INR. */
export interface BudgetStatus {
  /** Budget in force (null: no budget). */
  budget_inr: number | null;
  /** Today's spend, counting at least `call_reservation_inr` for each open call (what it holds). */
  spent_inr: number;
  day: string;
  timezone: string;
}

/** A tenant refused by its budget gets at most one `budget.exceeded` event in this many seconds. */
export const REFUSAL_EVENT_EVERY_S = 60;

/** Daily budget checks. */
export class BudgetService {
  /** The last day {@link day} computed: days do not overlap, so any time inside it has this one. */
  private lastDay: { start: number; end: number; date: string } | null = null;
  /** When each tenant's last `budget.exceeded` was recorded, epoch seconds. */
  private readonly refusedAt = new Map<string, number>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly settings: BudgetSettings,
  ) {}

  /**
   * The day (in `timezone`) that `now` (epoch seconds) falls in: `dayBounds`, whose time-zone
   * arithmetic costs ~20 µs, computed again only when `now` leaves the last day computed (each
   * call placed runs the check twice).
   */
  private day(now: number): { start: number; end: number; date: string } {
    const last = this.lastDay;
    if (last !== null && now >= last.start && now < last.end) return last;
    this.lastDay = dayBounds(now, this.settings.timezone);
    return this.lastDay;
  }

  /** Micro-rupees a new call reserves. */
  get reservationMicro(): number {
    return inrToMicro(this.settings.callReservationInr);
  }

  /** The tenant's budget in micro-rupees, or null when none applies. */
  private budgetMicro(tenantId: string): number | null {
    const own = this.deps.repos.tenants.getTenant(tenantId)?.daily_budget_inr;
    const inr = own ?? this.settings.dailyBudgetInr;
    return inr > 0 ? inrToMicro(inr) : null;
  }

  /** Spend and budget of the tenant's current day. */
  status(tenantId: string): BudgetStatus {
    const now = this.deps.nowS();
    const { start, end, date } = this.day(now);
    const budget = this.budgetMicro(tenantId);
    return {
      budget_inr: budget === null ? null : microToInr(budget),
      spent_inr: microToInr(this.deps.repos.calls.spendMicro(tenantId, start, end, now)),
      day: date,
      timezone: this.settings.timezone,
    };
  }

  /**
   * Fails when the tenant's spend today (with what open calls hold) has reached its budget, or
   * would pass it with `extraMicro` more (the worst cost of work about to be paid for, such as a
   * session's opening synthesised by a cloud voice; default 0). Runs inside a `Store.write` for
   * the atomic form (see the module comment), or as a plain read before work.
   * @throws ApiError rate_limit_exceeded.
   */
  check(tenantId: string, extraMicro = 0): void {
    const budget = this.budgetMicro(tenantId);
    if (budget === null) return;
    const now = this.deps.nowS();
    const { start, end } = this.day(now);
    const spent = this.deps.repos.calls.spendMicro(tenantId, start, end, now);
    if (spent >= budget || spent + extraMicro > budget) {
      this.noteRefusal(tenantId, now, budget, spent);
      const over = spent < budget;
      const extra = over ? `; this would cost up to ₹${microToInr(extraMicro)} more` : '';
      throw new ApiError(
        'rate_limit_exceeded',
        `tenant ${tenantId} ${over ? 'would pass' : 'has reached'} its daily budget of ₹${microToInr(budget)} (spent or held by open calls today: ₹${microToInr(spent)}${extra}; each call holds ₹${microToInr(this.reservationMicro)} until it ends; the day resets at midnight ${this.settings.timezone})`,
      );
    }
  }

  /**
   * True when the tenant may spend `extraMicro` more today without passing its budget (always,
   * with no budget): the check before a language-model call, with its worst cost (docs/llm.md
   * "Where the model acts"). A plain read; it records nothing.
   */
  allows(tenantId: string, extraMicro: number): boolean {
    const budget = this.budgetMicro(tenantId);
    if (budget === null) return true;
    const now = this.deps.nowS();
    const { start, end } = this.day(now);
    const spent = this.deps.repos.calls.spendMicro(tenantId, start, end, now);
    return spent < budget && spent + extraMicro <= budget;
  }

  /**
   * Records `budget.exceeded` for a refusal (docs/events.md), at most once a minute per tenant,
   * in a write of its own: the refused step itself writes nothing.
   */
  private noteRefusal(tenantId: string, now: number, budgetMicro: number, spentMicro: number): void {
    if (now - (this.refusedAt.get(tenantId) ?? -Infinity) < REFUSAL_EVENT_EVERY_S) return;
    this.refusedAt.set(tenantId, now);
    const data = { budget_inr: microToInr(budgetMicro), spent_inr: microToInr(spentMicro), timezone: this.settings.timezone };
    this.deps.uow.write((tx) => this.deps.events.appendTx(tx, { tenantId, type: 'budget.exceeded', data })).catch(() => undefined); // the store is closing: the refusal itself still stands
  }

  /**
   * {@link check} inside the write that records the call; returns the reservation to store with
   * it. First releases the tenant's call holds past their `reserve_until` (a bounded batch,
   * `CallRepo.releaseExpiredHolds`), with or without a budget: they count for nothing, and
   * releasing them keeps the spend read's range of expired holds small.
   * @throws ApiError rate_limit_exceeded.
   */
  reserveTx(tenantId: string): number {
    this.deps.repos.calls.releaseExpiredHolds(tenantId, this.deps.nowS());
    this.check(tenantId);
    return this.reservationMicro;
  }
}
