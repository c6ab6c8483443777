import { create, type MessageInitShape } from '@bufbuild/protobuf';
import type { Clock } from '../../shared/clock.ts';
import { slicedMap, timeSlicer } from '../../shared/timeSlice.ts';
import { DEFAULT_ACCOUNT_JOB_LIMIT } from '../../shared/config.ts';
import { AppError } from '../../shared/errors.ts';
import {
  type AccountSchema,
  CronJobSchema,
  type GroupSchema,
  GroupDeleteMode,
  JobAction,
  type JobsService as JobsServiceDesc,
  type AdminService as AdminServiceDesc,
} from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { ServiceImpl } from '../../shared/grpc/bridge.ts';
import { settingsFromProto, settingsToProtoJob } from '../../shared/grpc/jobSettingsProto.ts';
import { effectiveStatus } from '../../shared/job/index.ts';
import { maskSecrets } from '../../shared/job/index.ts';
import type { Account } from './account.ts';
import type { Group } from './group.ts';
import type { JobEntry } from './jobsView.ts';
import type { ExtraRun } from './extraRun.ts';
import type { JobsService } from './jobsService.ts';
import type { TestRuns } from './testRuns.ts';

type Impl = ServiceImpl<(typeof JobsServiceDesc)['method']>;

export function toProtoJob(entry: JobEntry, now: number): MessageInitShape<typeof CronJobSchema> {
  const { job } = entry;
  return {
    id: BigInt(job.id),
    accountId: BigInt(job.accountId),
    // Answers never carry a secret: URL credentials and header values masked, the password as hasPassword.
    ...settingsToProtoJob(maskSecrets(job.settings)),
    fail: job.fail,
    status: effectiveStatus(job, now),
    points: entry.points,
    pausedUntil: job.pausedUntil !== null && job.pausedUntil > now ? BigInt(Math.floor(job.pausedUntil / 1000)) : undefined,
    createdAt: BigInt(Math.floor(job.createdAt / 1000)),
    updatedAt: BigInt(Math.floor(job.updatedAt / 1000)),
    deleted: job.deleted,
  };
}

const toProtoGroup = (g: Group, jobCount: number): MessageInitShape<typeof GroupSchema> => ({
  id: BigInt(g.id),
  name: g.name,
  priority: g.priority,
  jobCount,
});

const toProtoAccount = (a: Account): MessageInitShape<typeof AccountSchema> => ({
  id: BigInt(a.id),
  name: a.name,
  timezone: a.timezone,
  jobLimit: a.jobLimit,
  disabled: a.disabled,
  createdAt: BigInt(Math.floor(a.createdAt / 1000)),
});

const ACTIONS: Record<number, 'enable' | 'disable' | 'pause' | 'delete'> = {
  [JobAction.ENABLE]: 'enable',
  [JobAction.DISABLE]: 'disable',
  [JobAction.PAUSE]: 'pause',
  [JobAction.DELETE]: 'delete',
};

const DELETE_MODES: Record<number, 'ungroup' | 'vanish' | 'empty'> = {
  [GroupDeleteMode.UNGROUP]: 'ungroup',
  [GroupDeleteMode.VANISH]: 'vanish',
  [GroupDeleteMode.EMPTY]: 'empty',
};

/**
 * A reply's jobs as messages, made in slices: create() keeps them as they are, so the reply's one
 * remaining step in one turn is encoding, which is short even for the largest page of jobs.
 */
async function protoJobs(entries: JobEntry[], now: number) {
  return { jobs: await slicedMap(entries, (e) => create(CronJobSchema, toProtoJob(e, now))) };
}

/** The gRPC edge of the jobs service: proto in, domain call, proto out. Nothing else. */
export function jobsGrpcImpl(service: JobsService, clock: Clock, tests: Pick<TestRuns, 'testJob'>): Impl {
  const jobs = (entries: JobEntry[]) => protoJobs(entries, clock.now());
  const order = (o: { run: bigint; payload?: string } | undefined): ExtraRun | null =>
    o && o.run > 0n ? { run: Number(o.run), payload: o.payload ?? null } : null;
  return {
    addJobs: async (r) => {
      // Decoding the batch took this turn: the next one is given at once.
      const inputs = await slicedMap(r.jobs, (j) => settingsFromProto(j), timeSlicer({ yieldFirst: true }));
      const { entries, answer } = await service.addJobs(Number(r.accountId), inputs, r.jobs.map((_, i) => order(r.runs[i])), r.idempotencyKey ?? null);
      return answer === undefined ? jobs(entries) : { jobs: [], batchAnswer: answer };
    },
    recordBatchAnswer: async (r) => ({ answer: await service.recordBatchAnswer(Number(r.accountId), r.idempotencyKey, r.answer) }),
    editJobs: async (r) =>
      jobs(
        await service.editJobs(
          Number(r.accountId),
          r.groupId !== undefined ? { groupId: Number(r.groupId) } : { ids: r.ids.map(Number) },
          settingsFromProto(r.settings),
          order(r.run),
        ),
      ),
    applyAction: async (r) => {
      const action = ACTIONS[r.action];
      if (!action) throw new AppError('INVALID_PARAMETER', 'action: unknown');
      return jobs(await service.applyAction(Number(r.accountId), r.ids.map(Number), action, r.pauseFor ?? null));
    },
    getJob: async (r) => toProtoJob(service.getJob(Number(r.accountId), Number(r.id)), clock.now()),
    getJobs: async (r) => protoJobs(service.getJobs(Number(r.accountId), r.ids.map(Number)), clock.now()),
    listJobs: async (r) =>
      jobs(service.listJobs(Number(r.accountId), { page: r.page, limit: r.limit, keyword: r.keyword, groupId: r.groupId === undefined ? null : Number(r.groupId) })),
    runJob: async (r) => ({ at: BigInt(await service.runJob(Number(r.accountId), Number(r.id), Number(r.time), r.payload ?? null)) }),
    testJob: async (r) => tests.testJob(Number(r.accountId), Number(r.id), settingsFromProto(r.settings)),
    jobHistory: async (r) => ({
      entries: (await service.history(Number(r.accountId), Number(r.id), r.page, r.limit, r.versionsOnly)).map((e) => ({
        revision: BigInt(e.revision),
        time: BigInt(e.time),
        type: e.type,
        dataJson: JSON.stringify(e.data),
        accountId: BigInt(e.by),
        version: e.mark ? BigInt(e.mark.version) : undefined,
        changes: e.mark?.changes.map((c) => ({
          field: c.field,
          beforeJson: 'after' in c ? JSON.stringify(c.before) : undefined,
          afterJson: 'after' in c ? JSON.stringify(c.after) : undefined,
          secret: c.secret === true,
        })),
        rollbackTo: e.mark?.rollbackTo ? BigInt(e.mark.rollbackTo) : undefined,
      })),
    }),
    rollbackJob: async (r) => {
      const { entry, changed } = await service.rollback(Number(r.accountId), Number(r.id), Number(r.version), r.dryRun);
      return { job: toProtoJob(entry, clock.now()), changed };
    },
    issueBadge: async (r) => {
      const badge = await service.issueBadge(Number(r.accountId), Number(r.id));
      return { token: badge.token, issuedAt: BigInt(Math.floor(badge.at / 1000)) };
    },
    revokeBadge: async (r) => ({ revoked: await service.revokeBadge(Number(r.accountId), Number(r.id)) }),
    badgeJob: async (r) => toProtoJob(service.badgeJob(r.tokenHash), clock.now()),
    addGroup: async (r) => {
      const g = await service.addGroup(Number(r.accountId), r.name ?? '', r.priority ?? 0);
      return toProtoGroup(g, 0);
    },
    editGroup: async (r) => {
      const g = await service.editGroup(Number(r.accountId), Number(r.id), r.name, r.priority);
      return toProtoGroup(g, service.groupJobCount(g.accountId, g.id));
    },
    getGroup: async (r) => {
      const g = service.getGroup(Number(r.accountId), Number(r.id));
      return toProtoGroup(g, service.groupJobCount(g.accountId, g.id));
    },
    listGroups: async (r) => ({
      groups: service.listGroups(Number(r.accountId), r.name ?? null).map((g) => toProtoGroup(g, service.groupJobCount(g.accountId, g.id))),
    }),
    deleteGroup: async (r) => {
      const mode = DELETE_MODES[r.mode];
      if (!mode) throw new AppError('INVALID_PARAMETER', 'mode: unknown');
      return jobs(await service.deleteGroup(Number(r.accountId), Number(r.id), mode));
    },
    authenticate: async (r) => toProtoAccount(await service.authenticate(r.tokenHash)),
    getAccount: async (r) => toProtoAccount(service.getAccount(Number(r.id))),
    editAccount: async (r) => {
      if (r.timezone === undefined) return toProtoAccount(service.getAccount(Number(r.id)));
      return toProtoAccount(await service.editAccount(Number(r.id), r.timezone));
    },
    rotateSigningSecret: async (r) => rotateSigningSecret(service, r.id),
    rotateToken: async (r) => rotateToken(service, r.id, r.tokenHash),
  };
}

/** The one answer that carries a new token (the gateway's caller's own account, or the operator's). */
async function rotateToken(service: JobsService, id: bigint, replacing?: string) {
  const { account, token } = await service.rotateToken(Number(id), replacing);
  return { account: toProtoAccount(account), token };
}

/** The one answer that carries a signing secret (the gateway's caller's own account, or the operator's). */
async function rotateSigningSecret(service: JobsService, id: bigint) {
  const { account, signingSecret, previousValidUntil } = await service.rotateSigningSecret(Number(id));
  return { account: toProtoAccount(account), signingSecret, previousValidUntil: BigInt(previousValidUntil) };
}

/** The operator's calls (AdminService): served on their own port, behind the admin credential. */
/** `accountJobLimit`: the job limit of an account created without one. */
export function adminGrpcImpl(service: JobsService, clock: Clock, accountJobLimit = DEFAULT_ACCOUNT_JOB_LIMIT): ServiceImpl<(typeof AdminServiceDesc)['method']> {
  return {
    createAccount: async (r) => {
      const { account, token } = await service.createAccount(r.name, r.timezone, r.token ?? null, r.jobLimit ?? accountJobLimit);
      return { account: toProtoAccount(account), token, signingSecret: account.signing.current ?? '' };
    },
    listAccounts: async () => ({ accounts: service.listAccounts().map(toProtoAccount) }),
    rotateToken: async (r) => rotateToken(service, r.id),
    disableAccount: async (r) => toProtoAccount(await service.disableAccount(Number(r.id))),
    rotateSigningSecret: async (r) => rotateSigningSecret(service, r.id),
    enableAccount: async (r) => toProtoAccount(await service.enableAccount(Number(r.id))),
    listAccountJobs: async (r) =>
      protoJobs(service.listJobs(Number(r.accountId), { page: r.page, limit: r.limit, keyword: r.keyword, groupId: null }), clock.now()),
    deleteAccountJobs: async (r) => ({ deleted: await service.deleteAllJobs(Number(r.id)) }),
  };
}
