// Recurring jobs (contract section 22): a business's templates, their occurrences read from the rule,
// and their materialisation RECURRING_HORIZON ahead, each occurrence exactly once (its row, keyed by
// template and local date-time, commits with its package), through the package creation service.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DB } from '../../db/database.js';
import type { RecurringConfig } from '../../config/recurring.js';
import type { AuthContext } from '../../shared/auth-context.js';
import type { Clock } from '../../shared/clock.js';
import { AppError, badRequest, conflict, notFound } from '../../shared/errors.js';
import { decodeCursor, toRowPage } from '../../shared/pagination.js';
import type { PackageService } from '../packages/packages.service.js';
import type { CreatePackageBody, FullPackage } from '../packages/packages.schemas.js';
import {
  checkOffsets,
  checkPerDay,
  checkTimeZone,
  localOf,
  occurrences,
  parseRule,
  zoneInstant,
  type Occurrence,
  type RecurringRule,
  type Window,
} from './recurring-rule.js';
import type { OccurrenceWithStatus, RecurringJobRow, RecurringRepository } from './recurring.repository.js';
import type {
  CreateRecurringBody,
  OccurrenceView,
  PauseBody,
  RecurringJobResponse,
  RecurringTemplate,
  UpdateRecurringBody,
} from './recurring.schemas.js';

const DAY_MS = 86_400_000;
const NEXT_OCCURRENCES = 10;
/** The end of an open range (PostgreSQL takes it; JS's largest Date it does not). */
const FOREVER = new Date('9999-12-31T00:00:00Z');

export interface RecurringDeps {
  db: DB;
  repo: RecurringRepository;
  clock: Clock;
  logger: Logger;
  config: RecurringConfig;
  packages: Pick<PackageService, 'create' | 'announce' | 'cancelOccurrence'>;
}

const iso = (w: Window) => ({ start: w.start.toISOString(), end: w.end.toISOString() });

/** The POST /packages body of one occurrence: the template with its windows made absolute. */
export function packageBodyFor(
  template: RecurringTemplate,
  occurrence: Occurrence,
  timeZone: string,
): CreatePackageBody {
  const { pickupWindow: _pickup, dropoffWindow: _dropoff, ...fields } = template;
  return {
    ...fields,
    timeZone,
    ...(occurrence.pickupWindow ? { pickupWindow: iso(occurrence.pickupWindow) } : {}),
    ...(occurrence.dropoffWindow ? { dropoffWindow: iso(occurrence.dropoffWindow) } : {}),
  };
}

/** A package error about `body.x` is about `body.template.x` here. */
function asTemplateError(err: unknown): unknown {
  if (!(err instanceof AppError) || err.statusCode >= 500) return err;
  return new AppError(err.statusCode, err.code, err.message.replace(/\bbody\./g, 'body.template.'), err.headers);
}

const recurringNotFound = () => notFound('Recurring job not found', 'RECURRING_JOB_NOT_FOUND');

/** Thrown to roll back the trial package of a template check. */
const TRIAL = Symbol('trial package');

export class RecurringService {
  constructor(private readonly deps: RecurringDeps) {}

  // ---- the API ----

  async create(auth: AuthContext, body: CreateRecurringBody): Promise<RecurringJobResponse> {
    const { rule, timeZone } = await this.definition(auth.userId, body.rule, body.timeZone, body.template);
    await this.tryTemplate(auth, rule, body.template);
    const now = this.deps.clock.now();
    const row: RecurringJobRow = {
      id: randomUUID(),
      business_id: auth.userId,
      rule: rule.text,
      time_zone: timeZone,
      template: body.template,
      state: 'ACTIVE',
      paused_until: null,
      created_at: now,
      updated_at: now,
    };
    await this.deps.repo.insert({ ...row, template: JSON.stringify(body.template) });
    await this.materialiseJob(row, now);
    return this.view(row);
  }

  async list(auth: AuthContext, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 20;
    const rows = await this.deps.repo.list(auth.userId, limit, decodeCursor(query.cursor));
    return toRowPage(rows, limit, (row) => this.view(row));
  }

  async get(auth: AuthContext, id: string): Promise<RecurringJobResponse> {
    const row = await this.owned(auth, id);
    return { ...this.view(row), nextOccurrences: await this.nextOccurrences(row) };
  }

  async update(auth: AuthContext, id: string, body: UpdateRecurringBody): Promise<RecurringJobResponse> {
    const row = await this.owned(auth, id);
    const template = body.template ?? (row.template as RecurringTemplate);
    // A new time zone alone keeps the rule's DTSTART (a local time) and moves it to the new zone.
    const { rule, timeZone } = await this.definition(
      auth.userId,
      body.rule ?? row.rule,
      body.timeZone ?? (body.rule === undefined ? row.time_zone : undefined),
      template,
    );
    if (body.template || body.rule || body.timeZone) await this.tryTemplate(auth, rule, template);
    const now = this.deps.clock.now();
    const updated = await this.deps.repo.update(id, {
      rule: rule.text,
      time_zone: timeZone,
      template: JSON.stringify(template),
      updated_at: now,
    });
    if (!updated) throw recurringNotFound();
    await this.replan(auth, updated, now);
    await this.materialiseJob(updated, now);
    return { ...this.view(updated), nextOccurrences: await this.nextOccurrences(updated) };
  }

  /** Deletes a template; its PENDING occurrences from now on are cancelled first. */
  async remove(auth: AuthContext, id: string): Promise<void> {
    const row = await this.owned(auth, id);
    // Paused first, so that no instance creates one while the cancellations run.
    await this.deps.repo.update(id, { state: 'PAUSED', paused_until: null, updated_at: this.deps.clock.now() });
    await this.cancelPending(auth, row, this.deps.clock.now(), FOREVER, 'Recurring job deleted');
    await this.deps.repo.delete(id);
  }

  /**
   * Pauses: no occurrence is created before `until` (or until resumed), and the PENDING ones already
   * created in that time are cancelled (no fee: they were never assigned).
   */
  async pause(auth: AuthContext, id: string, body: PauseBody): Promise<RecurringJobResponse & { cancelled: number }> {
    await this.owned(auth, id);
    const now = this.deps.clock.now();
    let until: Date | null = null;
    if (body.until !== undefined) {
      until = new Date(body.until);
      if (until <= now) throw badRequest('body.until must be in the future');
    }
    const row = (await this.deps.repo.update(id, { state: 'PAUSED', paused_until: until, updated_at: now }))!;
    const cancelled = await this.cancelPending(auth, row, now, until ?? FOREVER, 'Recurring job paused');
    return { ...this.view(row), nextOccurrences: await this.nextOccurrences(row), cancelled };
  }

  /** Resumes: the occurrences a pause cancelled or held back (from now on) are created again. */
  async resume(auth: AuthContext, id: string): Promise<RecurringJobResponse> {
    await this.owned(auth, id);
    const now = this.deps.clock.now();
    const row = (await this.deps.repo.update(id, { state: 'ACTIVE', paused_until: null, updated_at: now }))!;
    await this.deps.repo.forget(id, 'PAUSED', now);
    await this.materialiseJob(row, now);
    return { ...this.view(row), nextOccurrences: await this.nextOccurrences(row) };
  }

  /** Skips the occurrence at a local date-time, or every occurrence on a local date; a PENDING package of one is cancelled. */
  async skip(auth: AuthContext, id: string, date: string): Promise<{ skipped: OccurrenceView[] }> {
    const row = await this.owned(auth, id);
    const rule = this.ruleOf(row);
    const day = date.slice(0, 10);
    const key = date.length === 10 ? undefined : date.length === 16 ? `${date}:00` : date;
    const dayStart = zoneInstant(Date.parse(`${day}T00:00:00Z`), row.time_zone).getTime();
    if (Number.isNaN(dayStart)) throw badRequest('date must be a date (YYYY-MM-DD) or a local date-time');
    const found = occurrences(rule, this.offsets(row), {
      from: new Date(dayStart - DAY_MS),
      until: new Date(dayStart + 2 * DAY_MS),
    }).filter((o) => (key ? o.local === key : o.local.startsWith(day)));
    if (found.length === 0) throw notFound(`The rule has no occurrence at ${date}`, 'OCCURRENCE_NOT_FOUND');
    const now = this.deps.clock.now();
    if (found.some((o) => o.at <= now)) throw conflict(`The occurrence at ${date} is past`, 'OCCURRENCE_PAST');
    const skipped: OccurrenceView[] = [];
    for (const occurrence of found) {
      await this.skipOne(auth, row, occurrence);
      skipped.push({ ...this.occurrenceView(occurrence), state: 'SKIPPED' });
    }
    return { skipped };
  }

  // ---- materialisation ----

  /**
   * Creates the occurrences of every template due before now + RECURRING_HORIZON that do not exist
   * yet (the background loop, on every instance: the unique key keeps each one to one package).
   */
  async materialise(): Promise<{ created: number; failed: number }> {
    const now = this.deps.clock.now();
    const totals = { created: 0, failed: 0 };
    for (const row of await this.deps.repo.materialisable(new Date(now.getTime() + this.deps.config.horizonMs))) {
      try {
        const done = await this.materialiseJob(row, now);
        totals.created += done.created;
        totals.failed += done.failed;
      } catch (err) {
        if (err instanceof AppError) this.deps.logger.warn({ err, recurringJobId: row.id }, 'recurring job skipped');
        else throw err;
      }
    }
    return totals;
  }

  private async materialiseJob(row: RecurringJobRow, now: Date): Promise<{ created: number; failed: number }> {
    const totals = { created: 0, failed: 0 };
    let from = now;
    if (row.state === 'PAUSED') {
      if (!row.paused_until) return totals;
      if (row.paused_until <= now) await this.deps.repo.endPause(row.id, row.paused_until);
      else from = row.paused_until;
    }
    const until = new Date(now.getTime() + this.deps.config.horizonMs);
    if (from >= until) return totals;
    const due = occurrences(this.ruleOf(row), this.offsets(row), { from, until });
    const existing = await this.deps.repo.keys(row.id, from, until);
    const auth: AuthContext = { userId: row.business_id, role: 'BUSINESS', sessionId: 'recurring-jobs' };
    for (const occurrence of due) {
      if (existing.has(occurrence.local)) continue;
      const result = await this.createOccurrence(auth, row, occurrence, now);
      if (result) totals[result]++;
    }
    return totals;
  }

  /** One occurrence: its row and its package in one transaction, or its FAILED row when the package is refused. */
  private async createOccurrence(
    auth: AuthContext,
    row: RecurringJobRow,
    occurrence: Occurrence,
    now: Date,
  ): Promise<'created' | 'failed' | undefined> {
    const occurrenceRow = {
      recurring_job_id: row.id,
      occurrence_local: occurrence.local,
      occurs_at: occurrence.at,
      pickup_start: occurrence.pickupWindow?.start ?? null,
      pickup_end: occurrence.pickupWindow?.end ?? null,
      dropoff_start: occurrence.dropoffWindow?.start ?? null,
      dropoff_end: occurrence.dropoffWindow?.end ?? null,
      created_at: now,
    };
    let created: FullPackage | undefined;
    try {
      created = await this.deps.db.transaction().execute(async (trx) => {
        // Paused, edited or deleted since it was read: the next turn decides with the template as it is.
        const current = await this.deps.repo.lockShared(trx, row.id);
        if (!current || current.updated_at.getTime() !== row.updated_at.getTime()) return undefined;
        if (current.state === 'PAUSED' && (!current.paused_until || occurrence.at < current.paused_until))
          return undefined;
        if (!(await this.deps.repo.claim(trx, { ...occurrenceRow, state: 'CREATED' }))) return undefined;
        const pkg = await this.deps.packages.create(
          trx,
          auth,
          packageBodyFor(row.template as RecurringTemplate, occurrence, row.time_zone),
        );
        await this.deps.repo.setPackage(trx, row.id, occurrence.local, pkg.id);
        return pkg as FullPackage;
      });
    } catch (err) {
      // A refusal (the country gone, a window the package rules refuse) is kept, not retried forever.
      if (!(err instanceof AppError)) throw err;
      const error = `${err.code}: ${err.message}`.slice(0, 1000);
      const recorded = await this.deps.repo.claim(this.deps.db, { ...occurrenceRow, state: 'FAILED', error });
      if (recorded)
        this.deps.logger.warn(
          { recurringJobId: row.id, occurrence: occurrence.local, error },
          'recurring occurrence not created',
        );
      return recorded ? 'failed' : undefined;
    }
    if (!created) return undefined;
    this.deps.packages.announce(created);
    return 'created';
  }

  // ---- helpers ----

  private async owned(auth: AuthContext, id: string): Promise<RecurringJobRow> {
    const row = await this.deps.repo.get(auth.userId, id);
    if (!row) throw recurringNotFound();
    return row;
  }

  /** The rule and zone checked: a known zone, a valid rule, at most RECURRING_MAX_PER_DAY a day, valid offsets. */
  private async definition(
    businessId: string,
    ruleText: string,
    timeZoneGiven: string | undefined,
    template: RecurringTemplate,
  ): Promise<{ rule: RecurringRule; timeZone: string }> {
    const timeZone = timeZoneGiven ?? (await this.deps.repo.countryTimeZone(businessId, template.countryId)) ?? 'UTC';
    checkTimeZone(timeZone);
    const nowLocal = localOf(this.deps.clock.now(), timeZone);
    const rule = parseRule(ruleText, timeZone, `${nowLocal.slice(0, 10)}T00:00:00`);
    checkPerDay(rule, this.deps.config.maxPerDay, nowLocal);
    checkOffsets(template);
    return { rule, timeZone };
  }

  /**
   * The template's package is checked as POST /packages would check it (contacts, country, payment,
   * price, windows) for the first occurrence to come, in a transaction rolled back: a template that
   * cannot make a package is a 400 now, not a failed occurrence later.
   */
  private async tryTemplate(auth: AuthContext, rule: RecurringRule, template: RecurringTemplate): Promise<void> {
    const now = this.deps.clock.now();
    const [first] = occurrences(rule, template, {
      from: now,
      until: new Date(now.getTime() + 3660 * DAY_MS),
      limit: 1,
    });
    if (!first) throw badRequest('body.rule has no occurrence from now on');
    try {
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.packages.create(trx, auth, packageBodyFor(template, first, rule.timeZone));
        throw TRIAL;
      });
    } catch (err) {
      if (err !== TRIAL) throw asTemplateError(err);
    }
  }

  private ruleOf(row: RecurringJobRow): RecurringRule {
    return parseRule(row.rule, row.time_zone, row.created_at.toISOString().slice(0, 19), false);
  }

  private offsets(row: RecurringJobRow) {
    const template = row.template as RecurringTemplate;
    return { pickupWindow: template.pickupWindow, dropoffWindow: template.dropoffWindow };
  }

  /**
   * Cancels the PENDING packages of the occurrences at instants in [from, until) and marks them PAUSED
   * (or SKIPPED's caller does); those already assigned stay. Returns how many were cancelled.
   */
  private async cancelPending(auth: AuthContext, row: RecurringJobRow, from: Date, until: Date, reason: string) {
    let cancelled = 0;
    for (const occurrence of await this.deps.repo.occurrences(row.id, from, until)) {
      if (occurrence.state !== 'CREATED') continue;
      if (await this.cancelPackage(auth, occurrence, reason)) {
        await this.deps.repo.setState(row.id, occurrence.occurrence_local, 'CREATED', 'PAUSED');
        cancelled++;
      }
    }
    return cancelled;
  }

  /** True when the occurrence's package is cancelled now (or was already, or is gone); false when it went ahead. */
  private async cancelPackage(auth: AuthContext, occurrence: OccurrenceWithStatus, reason: string): Promise<boolean> {
    if (!occurrence.package_id || occurrence.package_status === null) return true;
    if (occurrence.package_status === 'CANCELLED') return true;
    if (occurrence.package_status !== 'PENDING') return false;
    try {
      await this.deps.packages.cancelOccurrence(occurrence.package_id, auth, reason);
      return true;
    } catch (err) {
      // Assigned in the meantime: it goes ahead.
      if (err instanceof AppError && err.statusCode === 409) return false;
      throw err;
    }
  }

  /**
   * After an edit, the occurrences to come follow the new definition: those created under the old one
   * whose packages are still PENDING are cancelled and forgotten (made again by materialiseJob), as
   * are those that failed or were paused; those already assigned go ahead; skipped ones stay skipped.
   */
  private async replan(auth: AuthContext, row: RecurringJobRow, now: Date): Promise<void> {
    for (const occurrence of await this.deps.repo.occurrences(row.id, now, FOREVER)) {
      if (occurrence.state === 'SKIPPED') continue;
      if (occurrence.state === 'CREATED' && !(await this.cancelPackage(auth, occurrence, 'Recurring job edited')))
        continue;
      await this.deps.repo.deleteOccurrence(row.id, occurrence.occurrence_local);
    }
  }

  private async skipOne(auth: AuthContext, row: RecurringJobRow, occurrence: Occurrence): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const [stored] = await this.deps.repo.occurrencesByKey(row.id, [occurrence.local]);
      if (!stored) {
        const claimed = await this.deps.repo.claim(this.deps.db, {
          recurring_job_id: row.id,
          occurrence_local: occurrence.local,
          occurs_at: occurrence.at,
          state: 'SKIPPED',
          pickup_start: occurrence.pickupWindow?.start ?? null,
          pickup_end: occurrence.pickupWindow?.end ?? null,
          dropoff_start: occurrence.dropoffWindow?.start ?? null,
          dropoff_end: occurrence.dropoffWindow?.end ?? null,
          created_at: this.deps.clock.now(),
        });
        if (claimed) return;
        continue; // Created meanwhile by the background loop: skip that one.
      }
      if (stored.state === 'SKIPPED') return;
      if (stored.state === 'CREATED' && !(await this.cancelPackage(auth, stored, 'Recurring occurrence skipped')))
        throw conflict(`The occurrence at ${occurrence.local} is already under way`, 'OCCURRENCE_DISPATCHED');
      if (await this.deps.repo.setState(row.id, occurrence.local, stored.state, 'SKIPPED')) return;
    }
    throw conflict(`The occurrence at ${occurrence.local} changed meanwhile; try again`, 'OCCURRENCE_CHANGED');
  }

  /** The next 10 occurrences from now, with what became of those already created, skipped or paused. */
  private async nextOccurrences(row: RecurringJobRow): Promise<OccurrenceView[]> {
    const now = this.deps.clock.now();
    const next = occurrences(this.ruleOf(row), this.offsets(row), {
      from: now,
      until: new Date(now.getTime() + 3660 * DAY_MS),
      limit: NEXT_OCCURRENCES,
    });
    const stored = new Map(
      (
        await this.deps.repo.occurrencesByKey(
          row.id,
          next.map((o) => o.local),
        )
      ).map((s) => [s.occurrence_local, s]),
    );
    return next.map((occurrence) => {
      const s = stored.get(occurrence.local);
      const view = this.occurrenceView(occurrence);
      if (!s) {
        // Held back by a pause: not created while it lasts.
        const paused = row.state === 'PAUSED' && (!row.paused_until || occurrence.at < row.paused_until);
        return paused ? { ...view, state: 'PAUSED' } : view;
      }
      return {
        ...view,
        state: s.state,
        packageId: s.package_id,
        ...(s.pickup_start && s.pickup_end
          ? { pickupWindow: { start: s.pickup_start.toISOString(), end: s.pickup_end.toISOString() } }
          : {}),
        ...(s.dropoff_start && s.dropoff_end
          ? { dropoffWindow: { start: s.dropoff_start.toISOString(), end: s.dropoff_end.toISOString() } }
          : {}),
        ...(s.error ? { error: s.error } : {}),
      };
    });
  }

  private occurrenceView(occurrence: Occurrence): OccurrenceView {
    return {
      date: occurrence.local,
      at: occurrence.at.toISOString(),
      state: 'UPCOMING',
      packageId: null,
      ...(occurrence.pickupWindow ? { pickupWindow: iso(occurrence.pickupWindow) } : {}),
      ...(occurrence.dropoffWindow ? { dropoffWindow: iso(occurrence.dropoffWindow) } : {}),
    };
  }

  private view(row: RecurringJobRow): RecurringJobResponse {
    return {
      id: row.id,
      rule: row.rule,
      timeZone: row.time_zone,
      template: row.template as RecurringTemplate,
      state: row.state,
      pausedUntil: row.paused_until ? row.paused_until.toISOString() : null,
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }
}
