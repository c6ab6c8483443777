/** Structured JSON logs, one object per line on stdout (stderr for errors). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const envLevel = (): LogLevel => {
  const level = process.env.LOG_LEVEL as LogLevel | undefined;
  return level && level in ORDER ? level : 'info';
};

export function createLogger(service: string, base: Record<string, unknown> = {}, level: LogLevel = envLevel()): Logger {
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < ORDER[level]) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: lvl, service, msg, ...base, ...fields }, errorReplacer);
    (lvl === 'error' ? process.stderr : process.stdout).write(line + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(service, { ...base, ...fields }, level),
  };
}

// Errors have no enumerable properties; without this they would log as {}.
function errorReplacer(_key: string, value: unknown) {
  // `cause` (an AppError's driver error) is an Error too: the replacer runs on it in turn.
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack, ...(value.cause !== undefined && { cause: value.cause }) };
  if (typeof value === 'bigint') return value.toString();
  return value;
}
