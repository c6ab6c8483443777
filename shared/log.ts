import { pino, stdSerializers, type DestinationStream } from 'pino';
import { maskUrlsIn } from './urlCredentials.ts';

/**
 * Structured JSON logs, one object per line, through pino. Secrets never reach a line: fields
 * named like secrets are replaced, credentials in URLs (`user:pass@`) are masked anywhere in a
 * string, error messages and stacks included. A destination that fails (disk full, closed pipe)
 * drops lines instead of taking the process down.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'];
const envLevel = (): LogLevel => {
  const level = process.env.LOG_LEVEL as LogLevel | undefined;
  return level && LEVELS.includes(level) ? level : 'info';
};

// Field names that hold secrets: their values are replaced wherever they are in a log object.
const SECRET_KEYS = new Set(['password', 'token', 'authorization', 'Authorization', 'secret', 'signingSecret', 'signingSecrets', 'credentials', 'cookie', 'apiKey', 'api_key', 'httpHeaders', 'postData']);
const CENSORED = '[redacted]';

/**
 * Strings masked, errors turned into plain objects (then masked), secret fields replaced, at any
 * depth; cycles cut. One walk does it all: pino's own redaction walked every line a second time
 * for its wildcard paths, which cost an API request more than its log line's other work.
 */
function scrub(value: unknown, depth = 0, seen = new Set<object>()): unknown {
  if (typeof value === 'string') return maskUrlsIn(value);
  if (typeof value === 'bigint') return value.toString();
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  const source = value instanceof Error ? stdSerializers.err(value) : value;
  if (Array.isArray(source)) return source.map((v) => scrub(v, depth + 1, seen));
  if (ArrayBuffer.isView(source)) return `[${source.byteLength} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(source)) out[k] = SECRET_KEYS.has(k) ? CENSORED : scrub(v, depth + 1, seen);
  return out;
}

let writeErrors = 0;
/** Writes of log lines (and of anything printed) that failed in this thread so far: tock_log_write_errors_total. */
export const lostLogLines = () => writeErrors;

// Someone else's write to a broken stdout/stderr (a printed line) must not crash us either.
let guarded = false;
function guardStdio() {
  if (guarded) return;
  guarded = true;
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => writeErrors++);
}

let shared: DestinationStream | undefined;
/** Standard output, asynchronously, buffered up to 16 MiB while the reader is slow; failures only counted. */
function stdoutDestination(): DestinationStream {
  if (shared) return shared;
  const destination = pino.destination({ dest: 1, sync: false, minLength: 0, maxLength: 16 * 1024 * 1024 });
  destination.on('error', () => writeErrors++);
  return (shared = destination);
}

/**
 * A logger for a service. `destination` defaults to standard output; tests pass their own stream.
 * `level` defaults to LOG_LEVEL.
 */
export function createLogger(service: string, base: Record<string, unknown> = {}, level: LogLevel = envLevel(), destination?: DestinationStream): Logger {
  guardStdio();
  const root = pino(
    {
      level,
      base: { service, ...(scrub(base) as Record<string, unknown>) },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => scrub(fields) as Record<string, unknown>,
        bindings: (bindings) => scrub(bindings) as Record<string, unknown>,
      },
    },
    destination ?? stdoutDestination(),
  );
  return wrap(root);
}

function wrap(p: pino.Logger): Logger {
  return {
    debug: (msg, fields) => p.debug(fields ?? {}, maskUrlsIn(msg)),
    info: (msg, fields) => p.info(fields ?? {}, maskUrlsIn(msg)),
    warn: (msg, fields) => p.warn(fields ?? {}, maskUrlsIn(msg)),
    error: (msg, fields) => p.error(fields ?? {}, maskUrlsIn(msg)),
    child: (fields) => wrap(p.child(fields)),
  };
}
