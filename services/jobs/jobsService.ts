import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { EventStore } from '../../shared/eventStore/eventStore.ts';
import { validatePayload } from '../../shared/payload.ts';
import { addDuration, ScheduleError } from '../../shared/schedule/index.ts';
import { accountDecider, hashToken, isWellFormedToken, newToken, type Account, type AccountCommand } from './account.ts';
import { evolveJob, initialJobState, type JobEvent, type JobState } from './cronJob.ts';
import { decideJob, type JobCommand } from './decide.ts';
import { groupDecider, type Group, type GroupCommand } from './group.ts';
import { handleCommand, type Decider } from './handleCommand.ts';
import { createIdAllocator } from './ids.ts';
import { compileSchedule, type JobSettings, type SettingsInput } from './jobSettings.ts';
import type { JobEntry, JobsView } from './jobsView.ts';

export const MAX_BATCH = 1000;
export const MAX_PAGE = 1000;

const jobDecider: Decider<JobCommand, JobState, JobEvent> = { initialState: initialJobState, evolve: evolveJob, decide: decideJob };

export interface RunOrder {
  /** Unix seconds: > now schedules the run then; any other value > 0 runs now. */
  run: number;
  payload: string | null;
}

export type JobAction = 'enable' | 'disable' | 'pause' | 'delete';

/** Prefixes an AppError's message with where in a batch it happened (`data[3].url: ...`). */
async function at<T>(where: string | null, fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (where && error instanceof AppError) throw new AppError(error.kind, `${where}.${error.message}`);
    throw error;
  }
}

/** The jobs service's use cases, in domain terms. The gRPC edge only translates to and from proto. */
export function createJobsService(store: EventStore, view: JobsView, clock: Clock) {
  const ids = createIdAllocator(store);
  const now = () => clock.now();

  const runJobCommand = async (command: JobCommand) => {
    const meta = 'accountId' in command ? { accountId: command.accountId } : {};
    return handleCommand(store, `cronjob-${command.id}`, jobDecider, command, now, meta);
  };

  const account = (accountId: number): Account => {
    const found = view.account(accountId);
    if (!found || found.disabled) throw new AppError('UNAUTHENTICATED', 'Invalid API token, user not found.');
    return found;
  };

  const checkGroup = (accountId: number, input: SettingsInput) => {
    if (input.group !== undefined && input.group !== null && input.group !== 0 && !view.group(accountId, input.group)) {
      throw new AppError('NOT_FOUND', `group: group ${input.group} not found`);
    }
  };

  const runOrderCommand = (accountId: number, id: number, order: RunOrder, method: string): JobCommand => {
    if (order.payload !== null) validatePayload(order.payload, method);
    const nowMs = now();
    const runAt = order.run * 1000 > nowMs ? order.run * 1000 : nowMs;
    return { type: 'RequestRun', id, accountId, runId: `${id}:${runAt}:${randomBytes(4).toString('hex')}`, runAt, payload: order.payload };
  };

  const liveJobs = (accountId: number, idList: number[]): JobEntry[] =>
    idList.map((id) => {
      const entry = view.job(accountId, id);
      if (!entry) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
      return entry;
    });

  const settle = async (positions: (bigint | null)[]) => {
    const last = positions.reduce<bigint | null>((max, p) => (p !== null && (max === null || p > max) ? p : max), null);
    await view.waitFor(last);
  };

  return {
    async addJobs(accountId: number, inputs: SettingsInput[], runs: (RunOrder | null)[]): Promise<JobEntry[]> {
      const owner = account(accountId);
      if (inputs.length === 0) throw new AppError('MISSING_PARAMETER', 'data: at least one cron job is required');
      if (inputs.length > MAX_BATCH) throw new AppError('LIMIT_EXCEEDED', `data: at most ${MAX_BATCH} cron jobs per batch, got ${inputs.length}`);
      if (owner.jobLimit > 0 && view.countJobs(accountId) + inputs.length > owner.jobLimit) {
        throw new AppError('LIMIT_EXCEEDED', `the account may have at most ${owner.jobLimit} cron jobs`);
      }
      const prefix = (i: number) => (inputs.length > 1 || runs.length > 1 ? `data[${i}]` : null);
      // Validate every element before writing anything: a batch that fails changes nothing.
      for (let i = 0; i < inputs.length; i++) {
        await at(prefix(i), () => {
          checkGroup(accountId, inputs[i]);
          const [event] = decideJob({ type: 'CreateJob', id: 0, accountId, input: inputs[i], defaultTimezone: owner.timezone }, null, now());
          const order = runs[i];
          if (order) runOrderCommand(accountId, 0, order, event.type === 'JobCreated' ? event.data.settings.httpMethod : 'GET');
        });
      }
      const newIds = await ids.allocate('cronjob', inputs.length);
      const results = await Promise.all(
        newIds.map(async (id, i) => {
          const created = await runJobCommand({ type: 'CreateJob', id, accountId, input: inputs[i], defaultTimezone: owner.timezone });
          const order = runs[i];
          if (!order) return created.position;
          const run = await runJobCommand(runOrderCommand(accountId, id, order, created.state!.settings.httpMethod));
          return run.position;
        }),
      );
      await settle(results);
      return newIds.map((id) => view.job(accountId, id)!);
    },

    async editJobs(accountId: number, target: { ids: number[] } | { groupId: number }, input: SettingsInput, run: RunOrder | null): Promise<JobEntry[]> {
      account(accountId);
      let entries: JobEntry[];
      if ('groupId' in target) {
        if (!view.group(accountId, target.groupId)) throw new AppError('NOT_FOUND', `group ${target.groupId} not found`);
        entries = view.jobsOf(accountId, (e) => e.job.settings.group === target.groupId);
      } else {
        if (target.ids.length > MAX_BATCH) throw new AppError('LIMIT_EXCEEDED', `id: at most ${MAX_BATCH} ids per batch, got ${target.ids.length}`);
        entries = liveJobs(accountId, target.ids);
      }
      checkGroup(accountId, input);
      for (const entry of entries) {
        decideJob({ type: 'EditJob', id: entry.job.id, accountId, input }, entry.job, now());
        if (run) runOrderCommand(accountId, entry.job.id, run, input.httpMethod ?? entry.job.settings.httpMethod);
      }
      const positions = await Promise.all(
        entries.map(async ({ job }) => {
          const edited = await runJobCommand({ type: 'EditJob', id: job.id, accountId, input });
          if (!run) return edited.position;
          return (await runJobCommand(runOrderCommand(accountId, job.id, run, edited.state!.settings.httpMethod))).position;
        }),
      );
      await settle(positions);
      return entries.map(({ job }) => view.job(accountId, job.id)!);
    },

    async applyAction(accountId: number, idList: number[], action: JobAction, pauseFor: string | null): Promise<JobEntry[]> {
      account(accountId);
      if (idList.length > MAX_BATCH) throw new AppError('LIMIT_EXCEEDED', `id: at most ${MAX_BATCH} ids per batch, got ${idList.length}`);
      const entries = liveJobs(accountId, idList);
      const pauseUntil = (tz: string) => {
        if (pauseFor === null) return null;
        try {
          return addDuration(pauseFor, now(), tz);
        } catch (error) {
          if (error instanceof ScheduleError) throw new AppError('INVALID_PARAMETER', `for: ${error.message}`);
          throw error;
        }
      };
      const commands: JobCommand[] = entries.map(({ job }) => {
        const id = job.id;
        if (action === 'enable') return { type: 'EnableJob', id, accountId };
        if (action === 'disable') return { type: 'DisableJob', id, accountId };
        if (action === 'delete') return { type: 'DeleteJob', id, accountId };
        return { type: 'PauseJob', id, accountId, until: pauseUntil(job.settings.timezone) };
      });
      const positions = await Promise.all(commands.map(async (c) => (await runJobCommand(c)).position));
      await settle(positions);
      return entries.map(({ job }) => this.fresh(job.id, job.accountId));
    },

    /** The view's entry, also for a job deleted a moment ago (cron_delete returns the record). */
    fresh(id: number, accountId: number): JobEntry {
      return view.job(accountId, id) ?? view.anyJob(id)!;
    },

    getJob(accountId: number, id: number): JobEntry {
      account(accountId);
      const [entry] = liveJobs(accountId, [id]);
      return entry;
    },

    listJobs(accountId: number, query: { page: number; limit: number; keyword: string; groupId: number | null }): JobEntry[] {
      account(accountId);
      const keyword = query.keyword.trim().toLowerCase();
      const entries = view.jobsOf(accountId, (e) => {
        if (query.groupId !== null && e.job.settings.group !== query.groupId) return false;
        if (!keyword) return true;
        const s = e.job.settings;
        return String(e.job.id) === keyword || s.name.toLowerCase().includes(keyword) || s.url.toLowerCase().includes(keyword);
      });
      const limit = Math.min(Math.max(query.limit || MAX_PAGE, 1), MAX_PAGE);
      const page = Math.max(query.page || 1, 1);
      return entries.slice((page - 1) * limit, page * limit);
    },

    async runJob(accountId: number, id: number, time: number, payload: string | null): Promise<number> {
      account(accountId);
      const [entry] = liveJobs(accountId, [id]);
      const command = runOrderCommand(accountId, id, { run: time > 0 ? time : 1, payload }, entry.job.settings.httpMethod);
      const result = await runJobCommand(command);
      await view.waitFor(result.position);
      return Math.floor((command as Extract<JobCommand, { type: 'RequestRun' }>).runAt / 1000);
    },

    async history(accountId: number, id: number, page: number, limit: number) {
      account(accountId);
      const entry = view.job(accountId, id) ?? view.anyJob(id);
      if (!entry || entry.job.accountId !== accountId) throw new AppError('NOT_FOUND', `cron job ${id} not found`);
      const size = Math.min(Math.max(limit || 100, 1), 1000);
      const events = await store.readStream(`cronjob-${id}`, { direction: 'backwards' });
      return events.slice((Math.max(page, 1) - 1) * size, Math.max(page, 1) * size).map((e) => ({
        revision: e.revision,
        time: Math.floor(((e.data as { at?: number }).at ?? e.time) / 1000),
        type: e.type,
        data: maskPassword(e.data),
      }));
    },

    /** An execution's outcome (from the bus): counts consecutive failures, auto-disables, stops a done one-time job. */
    async recordExecution(jobId: number, runId: string, succeeded: boolean, manual: boolean): Promise<void> {
      const entry = view.anyJob(jobId);
      if (!entry || entry.job.deleted) return;
      const kind = manual ? null : scheduleKind(entry.job.settings, jobId);
      const oneTimeDone = kind === 'one-time' || kind === 'timestamp';
      const result = await runJobCommand({ type: 'RecordExecution', id: jobId, runId, succeeded, oneTimeDone });
      await view.waitFor(result.position);
    },

    // Groups
    async addGroup(accountId: number, name: string, priority: number): Promise<Group> {
      account(accountId);
      const [id] = await ids.allocate('group', 1);
      return groupCommand({ type: 'CreateGroup', id, accountId, name, priority });
    },
    async editGroup(accountId: number, id: number, name: string | undefined, priority: number | undefined): Promise<Group> {
      account(accountId);
      return groupCommand({ type: 'EditGroup', id, accountId, name, priority });
    },
    getGroup(accountId: number, id: number): Group {
      account(accountId);
      const group = view.group(accountId, id);
      if (!group) throw new AppError('NOT_FOUND', `group ${id} not found`);
      return group;
    },
    listGroups(accountId: number, name: string | null): Group[] {
      account(accountId);
      return view.groupsOf(accountId).filter((g) => name === null || g.name === name);
    },
    async deleteGroup(accountId: number, id: number, mode: 'ungroup' | 'vanish' | 'empty'): Promise<JobEntry[]> {
      const group = this.getGroup(accountId, id);
      const members = view.jobsOf(accountId, (e) => e.job.settings.group === group.id);
      const positions = await Promise.all(
        members.map(async ({ job }) =>
          (await runJobCommand(mode === 'ungroup' ? { type: 'EditJob', id: job.id, accountId, input: { group: 0 } } : { type: 'DeleteJob', id: job.id, accountId })).position,
        ),
      );
      if (mode !== 'empty') positions.push((await handleCommand(store, `group-${id}`, groupDecider, { type: 'DeleteGroup', id, accountId } as GroupCommand, now, { accountId })).position);
      await settle(positions);
      return members.map(({ job }) => this.fresh(job.id, accountId));
    },
    groupJobCount: (accountId: number, id: number) => view.groupJobCount(accountId, id),

    // Accounts
    authenticate(tokenHash: string): Account {
      const found = view.accountByTokenHash(tokenHash);
      if (!found || found.disabled || found.tokenHash !== tokenHash) throw new AppError('UNAUTHENTICATED', 'Invalid API token, user not found.');
      return found;
    },
    getAccount: (id: number) => account(id),
    async editAccount(id: number, timezone: string): Promise<Account> {
      account(id);
      return accountCommand({ type: 'EditAccount', id, timezone: timezone.trim() });
    },
    async createAccount(name: string, timezone: string, token: string | null, jobLimit: number): Promise<{ account: Account; token: string }> {
      if (token !== null && !isWellFormedToken(token)) throw new AppError('INVALID_PARAMETER', 'token: must be exactly 32 characters from A-Z, a-z, 0-9');
      const secret = token ?? newToken();
      if (view.accountByTokenHash(hashToken(secret))) throw new AppError('INVALID_PARAMETER', 'token: already in use');
      const [id] = await ids.allocate('account', 1);
      const created = await accountCommand({ type: 'CreateAccount', id, name: name.trim() || `account ${id}`, timezone: timezone || 'UTC', tokenHash: hashToken(secret), jobLimit });
      return { account: created, token: secret };
    },
    listAccounts: () => view.allAccounts(),
    async rotateToken(id: number): Promise<{ account: Account; token: string }> {
      const secret = newToken();
      const rotated = await accountCommand({ type: 'RotateToken', id, tokenHash: hashToken(secret) });
      return { account: rotated, token: secret };
    },
    disableAccount: (id: number) => accountCommand({ type: 'DisableAccount', id }),
  };

  async function groupCommand(command: GroupCommand): Promise<Group> {
    const result = await handleCommand(store, `group-${command.id}`, groupDecider, command, now, { accountId: command.accountId });
    await view.waitFor(result.position);
    return result.state!;
  }

  async function accountCommand(command: AccountCommand): Promise<Account> {
    const result = await handleCommand(store, `account-${command.id}`, accountDecider, command, now);
    await view.waitFor(result.position);
    return result.state!;
  }
}

export type JobsService = ReturnType<typeof createJobsService>;

function scheduleKind(settings: JobSettings, jobId: number) {
  try {
    return compileSchedule(settings, jobId).kind;
  } catch {
    return null;
  }
}

function maskPassword(data: unknown): unknown {
  const copy = JSON.parse(JSON.stringify(data));
  if (copy?.settings?.password) copy.settings.password = '********';
  if (copy?.changes?.password !== undefined) copy.changes.password = '********';
  return copy;
}
