import { readFileSync } from 'node:fs';
import { credsAuthenticator, type ConnectionOptions } from '@nats-io/transport-node';
import { ConfigError, type Config } from '../config.ts';

export type NatsAuth = Pick<ConnectionOptions, 'user' | 'pass' | 'token' | 'authenticator' | 'inboxPrefix'>;

/**
 * Each service gets replies (JetStream API answers, pulled messages) on an inbox of its own, so
 * the NATS configuration can let a user read its own replies and nobody else's (deploy/k8s/base/nats.conf).
 */
export const inboxOf = (service: 'planner' | 'executor' | 'jobs' | 'logs' | 'notifier') => `_INBOX_${service}`;

/**
 * The NATS credentials of one service: user and password (the password inline or from a mounted
 * Secret file), a token, or a .creds file (NKey/JWT). None: connect without (a server without
 * users). The values go to the connection only, never to a log line.
 */
export function natsAuth(
  config: Pick<Config, 'NATS_USER' | 'NATS_PASSWORD' | 'NATS_PASSWORD_FILE' | 'NATS_TOKEN' | 'NATS_CREDS'>,
  service: Parameters<typeof inboxOf>[0],
): NatsAuth {
  return { inboxPrefix: inboxOf(service), ...credentials(config) };
}

function credentials(config: Pick<Config, 'NATS_USER' | 'NATS_PASSWORD' | 'NATS_PASSWORD_FILE' | 'NATS_TOKEN' | 'NATS_CREDS'>): NatsAuth {
  const read = (variable: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (error) {
      throw new ConfigError([`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`]);
    }
  };
  if (config.NATS_CREDS) return { authenticator: credsAuthenticator(new Uint8Array(read('NATS_CREDS', config.NATS_CREDS))) };
  if (config.NATS_TOKEN) return { token: config.NATS_TOKEN };
  if (config.NATS_USER) {
    const pass = config.NATS_PASSWORD ?? read('NATS_PASSWORD_FILE', config.NATS_PASSWORD_FILE!).toString('utf8').trim();
    return { user: config.NATS_USER, pass };
  }
  return {};
}

/** For a main(): the credentials, or one line per problem on stderr and exit 1. */
export function natsAuthOrExit(config: Parameters<typeof natsAuth>[0], service: Parameters<typeof inboxOf>[0]): NatsAuth {
  try {
    return natsAuth(config, service);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const line of error.problems) process.stderr.write(`config error: ${line}\n`);
    process.exit(1);
  }
}
