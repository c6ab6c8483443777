import { readFileSync } from 'node:fs';
import { HelpRequest, UsageError } from './args.ts';
import type { Io } from './io.ts';

const USAGE = `usage: tock <command> [options]

Owner commands (Tock's public API; --url or TOCK_URL, default http://127.0.0.1:8080; --token or TOCK_TOKEN):
  jobs list|get|add|edit|delete|run|pause|enable|disable ...   cron jobs (also snooze|unsnooze)
  jobs history <id>, jobs rollback <id> <version>               a job's versions, and restoring one
  jobs badge <id> [--revoke]                                    a job's status badge (an SVG URL for READMEs)
  calendar [--hours N]                                          every run of the account's jobs in the next hours (24 at most)
  logs <job id> [--follow]                                      a job's execution results
  groups list|get|add|edit|delete ...                           job groups
Operator commands (ADMIN_ADDR / NOTIFIER_ADDR when set, otherwise the event store of DATA_DIR):
  accounts create|list|rotate|disable ...                       accounts and their API tokens
  channels list|add|edit|delete|test|secret-rotate --account ID ...   an account's notification channels
  migrate                                                       the databases (EVENTSTORE_URL, LOGS_DB_URL or DATA_DIR)
                                                                brought to this version's schema
Anywhere:
  next '<expression>' [--tz ZONE] [--count N] ...               preview a schedule
  --version    --help (also after any command)    --json (on every read)

Exit codes: 0 done, 1 refused or failed (the API's message is shown), 2 bad command line.`;

type Command = (args: string[], io: Io, stop: AbortSignal) => Promise<number>;

// Each command module is loaded when used: `tock --version` and owner commands stay fast.
const COMMANDS: Record<string, () => Promise<Command>> = {
  jobs: async () => (await import('./jobsCommand.ts')).jobsCommand,
  logs: async () => (await import('./logsCommand.ts')).logsCommand,
  calendar: async () => (await import('./calendarCommand.ts')).calendarCommand,
  groups: async () => (await import('./groupsCommand.ts')).groupsCommand,
  accounts: async () => (await import('./accountsCommand.ts')).accountsCommand,
  account: async () => (await import('./accountsCommand.ts')).accountsCommand,
  channels: async () => async (args, io) => {
    // Its own parser takes no --help: answer it here, from its usage text.
    if (args.includes('--help') || args.includes('-h')) throw new HelpRequest((await import('./channelsCommand.ts')).USAGE);
    return (await import('./adminChannels.ts')).adminChannels(args, io);
  },
  migrate: async () => (await import('./migrateCommand.ts')).migrateCommand,
  next: async () => {
    const { nextCommand } = await import('./nextCommand.ts');
    return (args, io) => nextCommand(args, io.out, io.err);
  },
};

/** package.json's version: two levels up from the sources, three from dist/. */
function version(): string {
  for (const path of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'tock' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not this one
    }
  }
  return 'unknown';
}

async function main(argv: string[], io: Io, stop: AbortSignal): Promise<number> {
  const [command, ...args] = argv;
  if (command === '--version' || command === '-V' || command === 'version') {
    io.out(`tock ${version()}`);
    return 0;
  }
  const help = command === '--help' || command === '-h' || command === 'help';
  // `tock help jobs` is `tock jobs --help`.
  const name = help ? args[0] : command;
  const load = name === undefined ? undefined : COMMANDS[name];
  if (help && !load) {
    io.out(USAGE);
    return 0;
  }
  if (!load) {
    io.err(`${command === undefined ? 'a command is required' : `unknown command '${command}'`}\n${USAGE}`);
    return 2;
  }
  try {
    return await (await load())(help ? ['--help'] : args, io, stop);
  } catch (error) {
    if (error instanceof HelpRequest) {
      io.out(error.usage);
      return 0;
    }
    if (error instanceof UsageError) {
      io.err(`${error.message}\n${error.usage}`);
      return 2;
    }
    throw error;
  }
}

const io: Io = { out: (line) => process.stdout.write(line + '\n'), err: (line) => process.stderr.write(line + '\n'), env: process.env };
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
process.once('SIGTERM', () => stop.abort());

main(process.argv.slice(2), io, stop.signal).then(
  (code) => process.exit(code),
  (error) => {
    // The API's (or the jobs service's) own sentence, as any client gets it.
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
