import { createHash } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import { categoryOf, streamIdOf, type EventStore, type RecordedEvent } from '../../shared/eventStore/eventStore.ts';
import { subscriptionRun } from '../../shared/eventStore/subscriptionRun.ts';
import { compileSchedule, evolveJob, type CronJob, type JobEvent } from '../../shared/job/index.ts';
import type { Logger } from '../../shared/log.ts';
import type { Readiness } from '../../shared/readiness.ts';
import { supervise, type SupervisedRun, type Supervisor } from '../../shared/supervise.ts';
import { pointsPerDay } from '../../shared/schedule/index.ts';
import { accountDecider, type Account, type AccountEvent } from './account.ts';
import { groupDecider, type Group, type GroupEvent } from './group.ts';

export interface JobEntry {
  job: CronJob;
  points: number;
  /** The revision of the job's stream this state is folded up to: a command decided on it appends there. */
  revision: number;
}

/**
 * The jobs read model: every job, group and account, projected in memory from the event store.
 * Disposable by construction: it is rebuilt from the store at every start.
 */
export class JobsView {
  private jobs = new Map<number, JobEntry>();
  private jobsByAccount = new Map<number, number[]>();
  private groups = new Map<number, Group>();
  private accounts = new Map<number, Account>();
  private accountByToken = new Map<string, number>();
  /** Each job's badge: its token (opened by the store) and when it was issued. */
  private badges = new Map<number, { token: string; at: number }>();
  /** Job ids by the hash of their badge token: the gateway sends the hash, never the token. */
  private badgeByHash = new Map<string, number>();
  private position = -1n;
  private waiters: { position: bigint; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private supervisor: Supervisor | null = null;
  /** True while the subscription is caught up and running; requests fail fast (UNAVAILABLE) otherwise. */
  live = false;

  /**
   * Subscribes from the beginning; resolves once caught up with what is stored. The subscription is
   * supervised: when it fails it is resumed from the last applied event, with backoff, and the
   * view is not live meanwhile (the `jobs view` readiness condition is false).
   */
  async start(store: EventStore, options: { log: Logger; readiness?: Readiness }) {
    this.supervisor = supervise({ name: 'jobs view', log: options.log, readiness: options.readiness, start: () => this.subscribe(store) });
    await this.supervisor.started;
  }

  async stop() {
    await this.supervisor?.stop();
    this.live = false;
  }

  private async subscribe(store: EventStore): Promise<SupervisedRun> {
    const fromPosition = this.position >= 0n ? this.position : undefined;
    const run = await subscriptionRun(store, { fromPosition }, (event) => this.apply(event), (error) => this.lost(error));
    this.live = true;
    return {
      ended: run.ended,
      stop: async () => {
        this.live = false;
        await run.stop();
      },
    };
  }

  /** The subscription failed: whoever waits for the view to catch up gets a retryable error now, not at their deadline. */
  private lost(error: unknown) {
    this.live = false;
    const waiters = this.waiters;
    this.waiters = [];
    const reason = error instanceof Error ? error.message : String(error);
    for (const w of waiters) w.reject(new AppError('UNAVAILABLE', `the jobs view lost the event store (${reason}); the change may be stored: read it back before retrying`));
  }

  /**
   * Brings the view up to what the store holds now (of `category`, or everything), instead of at
   * the next poll: for reads that must not lag another process's write, such as a new token.
   */
  async catchUp(store: EventStore, category?: string): Promise<void> {
    let last: bigint | null = null;
    let fail!: (error: unknown) => void;
    const failed = new Promise<never>((_, reject) => (fail = reject));
    failed.catch(() => undefined);
    const probe = store.subscribe(
      { fromPosition: this.position >= 0n ? this.position : undefined, category },
      (event) => {
        last = event.position;
      },
      (error) => fail(error),
    );
    try {
      await Promise.race([probe.caughtUp, failed]);
    } finally {
      await probe.close();
    }
    await this.waitFor(last);
  }

  /** Resolves once the view has applied everything up to `position` (read-your-writes after a command). */
  waitFor(position: bigint | null): Promise<void> {
    if (position === null || this.position >= position) return Promise.resolve();
    if (!this.live) return Promise.reject(new AppError('UNAVAILABLE', 'the jobs view is catching up with the event store; try again shortly'));
    return new Promise((resolve, reject) => this.waiters.push({ position, resolve, reject }));
  }

  apply(event: RecordedEvent) {
    const category = categoryOf(event.stream);
    const id = Number(streamIdOf(event.stream));
    if (category === 'cronjob') this.applyJob(id, event as unknown as JobEvent, event.revision);
    else if (category === 'group') this.applyGroup(id, event as unknown as GroupEvent);
    else if (category === 'account') this.applyAccount(id, event as unknown as AccountEvent);
    this.position = event.position;
    if (this.waiters.length) {
      const ready = this.waiters.filter((w) => w.position <= this.position);
      this.waiters = this.waiters.filter((w) => w.position > this.position);
      for (const w of ready) w.resolve();
    }
  }

  private applyJob(id: number, event: JobEvent, revision: number) {
    if (event.type === 'BadgeIssued' || event.type === 'BadgeRevoked' || event.type === 'JobDeleted') this.applyBadge(id, event);
    const before = this.jobs.get(id);
    const job = evolveJob(before?.job ?? null, { type: event.type, data: event.data } as JobEvent);
    if (!job) return;
    if (!before) {
      const list = this.jobsByAccount.get(job.accountId) ?? [];
      // Ids arrive almost always in increasing order; keep the list sorted for paging.
      let i = list.length;
      while (i > 0 && list[i - 1]! > id) i--; // i - 1 is within [0, length)
      list.splice(i, 0, id);
      this.jobsByAccount.set(job.accountId, list);
    }
    const scheduleChanged = !before || event.type === 'JobEdited';
    const points = scheduleChanged ? jobPoints(job) : before.points;
    this.jobs.set(id, { job, points, revision });
  }

  /** A new badge replaces the old one (its URL stops working); revoking or deleting the job ends it. */
  private applyBadge(id: number, event: JobEvent) {
    const old = this.badges.get(id);
    if (old) {
      this.badgeByHash.delete(hashBadgeToken(old.token));
      this.badges.delete(id);
    }
    if (event.type !== 'BadgeIssued') return;
    this.badges.set(id, { token: event.data.token, at: event.data.at });
    this.badgeByHash.set(hashBadgeToken(event.data.token), id);
  }

  /** The badge of a live job of this account, if it has one. */
  badgeOf(accountId: number, id: number): { token: string; at: number } | undefined {
    return this.job(accountId, id) ? this.badges.get(id) : undefined;
  }

  /** The live job whose badge token has this hash (SHA-256, hex), or undefined. */
  jobByBadgeHash(hash: string): JobEntry | undefined {
    const id = this.badgeByHash.get(hash);
    const entry = id === undefined ? undefined : this.jobs.get(id);
    return entry && !entry.job.deleted ? entry : undefined;
  }

  private applyGroup(id: number, event: GroupEvent) {
    const group = groupDecider.evolve(this.groups.get(id) ?? null, { type: event.type, data: event.data } as GroupEvent);
    if (group) this.groups.set(id, group);
  }

  private applyAccount(id: number, event: AccountEvent) {
    const before = this.accounts.get(id);
    const account = accountDecider.evolve(before ?? null, { type: event.type, data: event.data } as AccountEvent);
    if (!account) return;
    if (before && before.tokenHash !== account.tokenHash) this.accountByToken.delete(before.tokenHash);
    this.accountByToken.set(account.tokenHash, id);
    this.accounts.set(id, account);
  }

  /** A live job of this account, or undefined (missing, deleted and foreign look the same). */
  job(accountId: number, id: number): JobEntry | undefined {
    const entry = this.jobs.get(id);
    return entry && !entry.job.deleted && entry.job.accountId === accountId ? entry : undefined;
  }

  /** Any job by id, deleted or not (cron_delete answers with the deleted record). */
  anyJob(id: number): JobEntry | undefined {
    return this.jobs.get(id);
  }

  /** The account's live jobs in id order, optionally only those matching `filter`. */
  jobsOf(accountId: number, filter?: (entry: JobEntry) => boolean): JobEntry[] {
    const out: JobEntry[] = [];
    for (const id of this.jobsByAccount.get(accountId) ?? []) {
      const entry = this.jobs.get(id)!;
      if (!entry.job.deleted && (!filter || filter(entry))) out.push(entry);
    }
    return out;
  }

  countJobs(accountId: number): number {
    return this.jobsOf(accountId).length;
  }

  group(accountId: number, id: number): Group | undefined {
    const group = this.groups.get(id);
    return group && !group.deleted && group.accountId === accountId ? group : undefined;
  }

  groupsOf(accountId: number): Group[] {
    return [...this.groups.values()].filter((g) => !g.deleted && g.accountId === accountId).sort((a, b) => a.id - b.id);
  }

  groupJobCount(accountId: number, groupId: number): number {
    return this.jobsOf(accountId, (e) => e.job.settings.group === groupId).length;
  }

  account(id: number): Account | undefined {
    return this.accounts.get(id);
  }

  accountByTokenHash(hash: string): Account | undefined {
    const id = this.accountByToken.get(hash);
    return id === undefined ? undefined : this.accounts.get(id);
  }

  allAccounts(): Account[] {
    return [...this.accounts.values()].sort((a, b) => a.id - b.id);
  }
}

/** What a job's schedule costs per day (its `points`). */
export function jobPoints(job: CronJob): number {
  try {
    return pointsPerDay(compileSchedule(job.settings, job.id));
  } catch {
    // A schedule stored by an older, more lenient version: still listable, costs 1.
    return 1;
  }
}

/** As the gateway hashes a badge URL's token. */
export const hashBadgeToken = (token: string) => createHash('sha256').update(token).digest('hex');
