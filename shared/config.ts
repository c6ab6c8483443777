import { z } from 'zod';
import { decodeKey } from './crypto/envelope.ts';

/**
 * Configuration from the environment, validated at start. A bad value stops the process with one
 * line per problem, naming the variable, before anything listens.
 */
const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);
const optionalUrl = (schemes: string[]) =>
  z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || schemes.some((s) => v.startsWith(s)), { message: `must start with ${schemes.join(' or ')}` });

const POSTGRES = ['postgres://', 'postgresql://'];
/** A postgres URL's optional `schema` parameter must be a plain name: it is put into SQL. */
const schemaParamOk = (v: string | undefined) => {
  if (!v || !POSTGRES.some((s) => v.startsWith(s))) return true;
  try {
    const schema = new URL(v).searchParams.get('schema');
    return schema === null || /^[a-z_][a-z0-9_]{0,62}$/.test(schema);
  } catch {
    return false;
  }
};
const storeUrl = (schemes: string[]) =>
  optionalUrl(schemes).refine(schemaParamOk, { message: 'must be a valid URL; its schema parameter, if any, lower-case letters, digits and _' });
const optionalText = z
  .string()
  .trim()
  .optional()
  .transform((v) => (v ? v : undefined));

// A shared secret: long enough that guessing is hopeless. The message never quotes the value.
const secret = optionalText.refine((v) => v === undefined || v.length >= 16, { message: 'must be at least 16 characters (e.g. openssl rand -base64 32)' });

const flag = z
  .enum(['', '0', '1', 'false', 'true'])
  .default('')
  .transform((v) => v === '1' || v === 'true');

const rateLimit = z
  .string()
  .default('1')
  .transform((v, ctx) => {
    // "rate" or "rate/burst": requests per second per token; 0 turns the limit off.
    const m = /^\s*(\d+(?:\.\d+)?)\s*(?:\/\s*(\d+))?\s*$/.exec(v);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: 'must be "<requests per second>" or "<rate>/<burst>", e.g. 1 or 5/10; 0 turns it off' });
      return z.NEVER;
    }
    const rate = Number(m[1]);
    return { rate, burst: m[2] ? Math.max(1, Number(m[2])) : Math.max(1, Math.ceil(rate)) };
  });

const cidrList = z
  .string()
  .default('')
  .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .refine((list) => list.every((c) => /^[0-9a-fA-F:.]+\/\d{1,3}$/.test(c)), { message: 'must be a comma-separated list of CIDRs, e.g. 10.0.0.0/8,::1/128' });

/** Cron jobs a new account may have unless told otherwise (TOCK_ACCOUNT_JOB_LIMIT). */
export const DEFAULT_ACCOUNT_JOB_LIMIT = 1000;
export const DEFAULT_ACCOUNT_CONCURRENCY = 1000;

const schema = z.object({
  PORT: port(8080),
  HOST: z.string().default('0.0.0.0'),
  DATA_DIR: z.string().min(1).default('./data'),
  NATS_URL: optionalUrl(['nats://', 'tls://', 'ws://', 'wss://']),
  // The event store: PostgreSQL or EventStoreDB; unset, SQLite under DATA_DIR. ESDB_URL is the older
  // name, still read when EVENTSTORE_URL is unset.
  EVENTSTORE_URL: storeUrl([...POSTGRES, 'esdb://', 'esdb+discover://']),
  ESDB_URL: optionalUrl(['esdb://', 'esdb+discover://']),
  // The logs read model: PostgreSQL, or `sqlite:` (optionally `sqlite:<file>`); unset, the event
  // store's PostgreSQL when that is PostgreSQL, else SQLite under DATA_DIR.
  LOGS_DB_URL: storeUrl([...POSTGRES, 'sqlite:']),
  TOCK_BOOTSTRAP_TOKEN: z
    .string()
    .optional()
    .transform((v) => (v ? v : undefined))
    .refine((v) => v === undefined || /^[A-Za-z0-9]{32}$/.test(v), { message: 'must be exactly 32 characters from A-Z, a-z, 0-9' }),
  TOCK_RATE_LIMIT: rateLimit,
  // Job and channel secrets at rest (passwords, URL credentials, header values, chat URLs, bot
  // tokens, signing secrets): the AES-256 key, 32 bytes in base64 or hex, and/or a file of keys
  // for rotation. Read by the jobs service, the executors and the notifier.
  TOCK_SECRET_KEY: z
    .string()
    .optional()
    .transform((v) => (v?.trim() ? v.trim() : undefined))
    .refine((v) => v === undefined || decodeKey(v) !== undefined, { message: 'must be 32 bytes in base64 or hex (e.g. openssl rand -base64 32)' }),
  TOCK_SECRET_KEY_FILE: z.string().trim().optional().transform((v) => (v ? v : undefined)),
  // Cron jobs per account for accounts created from now on (not the first one); 0: no limit.
  TOCK_ACCOUNT_JOB_LIMIT: z.coerce.number({ message: 'must be a whole number of cron jobs, 0 for no limit' }).int({ message: 'must be a whole number of cron jobs, 0 for no limit' }).min(0, { message: 'must be 0 (no limit) or more' }).max(2_147_483_647).default(DEFAULT_ACCOUNT_JOB_LIMIT),
  // Behind an ingress or load balancer, per-address limits need the client's address from
  // X-Forwarded-For: "on" trusts one proxy, a number that many; off (default) uses the socket's.
  TOCK_TRUST_PROXY: z
    .string()
    .trim()
    .default('off')
    .transform((v, ctx) => {
      if (['', 'off', 'false', '0'].includes(v)) return 0;
      if (['on', 'true'].includes(v)) return 1;
      if (/^[1-9]$/.test(v)) return Number(v);
      ctx.addIssue({ code: 'custom', message: 'must be off, on, or the number of trusted proxies in front of the gateway (1-9)' });
      return z.NEVER;
    }),
  TOCK_ALLOW_NETWORKS: cidrList,
  TOCK_PUBLIC_URL: z.string().url().optional(),
  TOCK_DEFAULT_TIMEZONE: z.string().default('UTC'),
  TOCK_SERVER_NAME: z.string().optional(),
  // Due runs go on the bus this long before their instant; executors fire them on time. Half a
  // second off the second boundary, so planning the next second never competes with firing this one.
  TOCK_DISPATCH_LEAD_MS: z.coerce.number().int().min(0).max(60_000).default(1500),
  // Embedded mode: the executor on a worker thread (the second core), or 'off' in the main thread.
  TOCK_EXECUTOR_THREAD: z.enum(['on', 'off']).default('on'),
  // On SIGTERM an executor takes no more runs and lets its calls in flight finish for this long;
  // past it, those still in flight go back to the bus (and may be made twice). Default: a call
  // with the default job timeout (30 s), its one connect retry included, fits.
  TOCK_EXECUTOR_DRAIN_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  // The gateway's web dashboard at /dashboard/ (static files; it calls /api/v1 with the user's token).
  TOCK_DASHBOARD: z.enum(['on', 'off']).default('on'),
  // Each process's operations port (/healthz, /readyz, /metrics); 0: any free port. OPS_HOST
  // unset: see opsHost.
  OPS_PORT: port(9464),
  OPS_HOST: optionalText,
  // Notifications: email goes through the operator's SMTP server (unset: email channels fail with
  // a clear error); the merge window groups an account's notifications into one message per channel.
  SMTP_HOST: z.string().trim().optional().transform((v) => (v ? v : undefined)),
  SMTP_PORT: port(587),
  // implicit: TLS from the first byte (usually port 465); starttls: the upgrade is required;
  // opportunistic: upgrade when offered; off: plain text (a relay on the same host only).
  SMTP_TLS: z.enum(['implicit', 'starttls', 'opportunistic', 'off']).default('starttls'),
  SMTP_USER: z.string().optional(),
  SMTP_PASSWORD: z.string().optional(),
  SMTP_FROM: z.string().trim().optional().transform((v) => (v ? v : undefined)),
  TOCK_NOTIFY_WINDOW_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  TOCK_NOTIFY_RETRY_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  TOCK_TELEGRAM_API: z.string().url().default('https://api.telegram.org'),
  // Calls in flight per account on one executor; the rest of that account's runs wait their turn
  // (and beyond ten times this many, are skipped), so one account cannot take every slot. 0: no limit.
  TOCK_ACCOUNT_CONCURRENCY: z.coerce.number().int().min(0).max(1_000_000).default(DEFAULT_ACCOUNT_CONCURRENCY),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // Distributed mode: where each gRPC service listens and where the others find it.
  GRPC_HOST: z.string().default('127.0.0.1'),
  JOBS_GRPC_PORT: port(50051),
  PLANNER_GRPC_PORT: port(50052),
  LOGS_GRPC_PORT: port(50053),
  NOTIFIER_GRPC_PORT: port(50054),
  JOBS_ADDR: z.string().optional(),
  PLANNER_ADDR: z.string().optional(),
  LOGS_ADDR: z.string().optional(),
  NOTIFIER_ADDR: z.string().optional(),
  // AdminService (accounts, tokens) listens on its own port, behind its own credential.
  ADMIN_GRPC_PORT: port(50055),
  ADMIN_ADDR: z.string().optional(),
  // gRPC between services (distributed mode): mutual TLS from files (as Kubernetes mounts a
  // Secret), and/or a shared token. Without either a service refuses to start unless
  // TOCK_GRPC_INSECURE=1 says that an open port is what the operator wants.
  TOCK_GRPC_TLS_CA: optionalText,
  TOCK_GRPC_TLS_CERT: optionalText,
  TOCK_GRPC_TLS_KEY: optionalText,
  TOCK_GRPC_TLS_SERVER_NAME: optionalText,
  TOCK_GRPC_TOKEN: secret,
  TOCK_GRPC_TOKEN_FILE: optionalText,
  TOCK_ADMIN_TOKEN: secret,
  TOCK_ADMIN_TOKEN_FILE: optionalText,
  TOCK_GRPC_INSECURE: flag,
  // NATS credentials of this service's own user (least privilege: see deploy/k8s/base/nats.conf). Never logged.
  NATS_USER: optionalText,
  NATS_PASSWORD: optionalText,
  NATS_PASSWORD_FILE: optionalText,
  NATS_TOKEN: optionalText,
  NATS_CREDS: optionalText,
})
  .superRefine((c, ctx) => {
    if (c.SMTP_HOST && !c.SMTP_FROM) ctx.addIssue({ code: 'custom', path: ['SMTP_FROM'], message: 'required when SMTP_HOST is set (the sender address of notification emails)' });
    if (c.SMTP_USER && c.SMTP_PASSWORD === undefined) ctx.addIssue({ code: 'custom', path: ['SMTP_PASSWORD'], message: 'required when SMTP_USER is set' });
    const tls = [c.TOCK_GRPC_TLS_CA, c.TOCK_GRPC_TLS_CERT, c.TOCK_GRPC_TLS_KEY];
    if (tls.some(Boolean) && !tls.every(Boolean)) {
      ctx.addIssue({ code: 'custom', path: ['TOCK_GRPC_TLS_CA'], message: 'TOCK_GRPC_TLS_CA, TOCK_GRPC_TLS_CERT and TOCK_GRPC_TLS_KEY go together: set all three files or none' });
    }
    if ((c.NATS_PASSWORD || c.NATS_PASSWORD_FILE) && !c.NATS_USER) ctx.addIssue({ code: 'custom', path: ['NATS_USER'], message: 'required with NATS_PASSWORD' });
    if (c.NATS_USER && !c.NATS_PASSWORD && !c.NATS_PASSWORD_FILE) ctx.addIssue({ code: 'custom', path: ['NATS_PASSWORD'], message: 'required with NATS_USER (or NATS_PASSWORD_FILE)' });
    if ([c.NATS_USER, c.NATS_TOKEN, c.NATS_CREDS].filter(Boolean).length > 1) ctx.addIssue({ code: 'custom', path: ['NATS_USER'], message: 'use one of NATS_USER/NATS_PASSWORD, NATS_TOKEN or NATS_CREDS' });
    for (const name of ['TOCK_GRPC_TOKEN', 'TOCK_ADMIN_TOKEN'] as const) {
      if (c[name] && c[`${name}_FILE`]) ctx.addIssue({ code: 'custom', path: [name], message: `set ${name} or ${name}_FILE, not both` });
    }
  });

export type Config = z.output<typeof schema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The SMTP settings of the notifier, or undefined when email is not configured. */
export const smtpSettings = (c: Config) =>
  c.SMTP_HOST ? { host: c.SMTP_HOST, port: c.SMTP_PORT, tls: c.SMTP_TLS, user: c.SMTP_USER, password: c.SMTP_PASSWORD, from: c.SMTP_FROM! } : undefined;

/** Reads and validates the configuration; throws ConfigError listing every problem. */
/**
 * Where the operations port listens when OPS_HOST is unset. A service deployed on its own is
 * scraped and probed from other machines (all interfaces); embedded mode is usually one
 * machine's install, whose metrics (every account's counters together) stay on loopback until
 * the operator opens them (the container image does, for its published port).
 */
export const opsHost = (c: Config, mode: 'embedded' | 'distributed') => c.OPS_HOST ?? (mode === 'embedded' ? '127.0.0.1' : '0.0.0.0');

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || 'environment'}: ${i.message}`));
  }
  return result.data;
}

/** For a main(): validates or prints one line per problem and exits 1. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const line of error.problems) process.stderr.write(`config error: ${line}\n`);
      process.exit(1);
    }
    throw error;
  }
}
