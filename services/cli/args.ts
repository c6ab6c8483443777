import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command line the CLI cannot act on: exit code 2, the message and the command's usage. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Asked for help (`--help`, `-h`): the usage goes to stdout and the exit code is 0. */
export class HelpRequest extends Error {
  constructor(readonly usage: string) {
    super('help');
    this.name = 'HelpRequest';
  }
}

export type Options = NonNullable<ParseArgsConfig['options']>;

/** Options every command takes. */
export const COMMON: Options = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  token: { type: 'string' },
};

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** node:util parseArgs, strict, with the common options; a bad line becomes a UsageError. */
export function parse(args: string[], options: Options, usage: string): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args, options: { ...COMMON, ...options }, allowPositionals: true, strict: true }) as Parsed;
  } catch (error) {
    throw new UsageError((error as Error).message, usage);
  }
  if (parsed.values.help) throw new HelpRequest(usage);
  return parsed;
}

/** The one positional a command takes as a positive whole number (a job, group or account id). */
export function idOf(parsed: Parsed, what: string, usage: string): string {
  const [id, ...extra] = parsed.positionals;
  if (id === undefined) throw new UsageError(`${what} id is required`, usage);
  if (!/^[1-9]\d*$/.test(id)) throw new UsageError(`${what} id must be a positive whole number, got '${id}'`, usage);
  if (extra.length) throw new UsageError(`unexpected argument '${extra[0]}'`, usage);
  return id;
}

/** `name=value` arguments as API parameters, passed through as written: the API validates them. */
export function settingsOf(pairs: string[], usage: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`expected name=value (an API parameter, e.g. url=https://example.com/ping), got '${pair}'`, usage);
    settings[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return settings;
}

export function noPositionals(parsed: Parsed, usage: string) {
  if (parsed.positionals.length) throw new UsageError(`unexpected argument '${parsed.positionals[0]}'`, usage);
}
