import { readFileSync } from 'node:fs';
import { ConfigError, type Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { randomToken, type GrpcCredentials } from './grpcAuth.ts';

/**
 * The gRPC credentials of a distributed service, from its configuration. Two identities:
 * - `service`: what the gateway and the services present to JobsService, PlannerService and
 *   LogsService (mutual TLS and/or TOCK_GRPC_TOKEN);
 * - `admin`: what the operator's CLI presents to AdminService (accounts, tokens): the same TLS,
 *   plus TOCK_ADMIN_TOKEN, which must differ from the service token, so the gateway's identity
 *   cannot call an admin method.
 * Nothing configured: a ConfigError, unless TOCK_GRPC_INSECURE=1, which is logged as a warning.
 */
export type GrpcSecurityConfig = Pick<
  Config,
  | 'TOCK_GRPC_TLS_CA'
  | 'TOCK_GRPC_TLS_CERT'
  | 'TOCK_GRPC_TLS_KEY'
  | 'TOCK_GRPC_TLS_SERVER_NAME'
  | 'TOCK_GRPC_TOKEN'
  | 'TOCK_GRPC_TOKEN_FILE'
  | 'TOCK_ADMIN_TOKEN'
  | 'TOCK_ADMIN_TOKEN_FILE'
  | 'TOCK_GRPC_INSECURE'
>;

function readSecretFile(variable: string, path: string, problems: string[]): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    problems.push(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return undefined;
  }
}

function tokenOf(config: GrpcSecurityConfig, name: 'TOCK_GRPC_TOKEN' | 'TOCK_ADMIN_TOKEN', problems: string[]): string | undefined {
  if (config[name]) return config[name];
  const file = config[`${name}_FILE`];
  if (!file) return undefined;
  const token = readSecretFile(`${name}_FILE`, file, problems)?.toString('utf8').trim();
  if (token !== undefined && token.length < 16) problems.push(`${name}_FILE: the token in ${file} must be at least 16 characters`);
  return token;
}

function tlsOf(config: GrpcSecurityConfig, problems: string[]): GrpcCredentials['tls'] {
  if (!config.TOCK_GRPC_TLS_CA || !config.TOCK_GRPC_TLS_CERT || !config.TOCK_GRPC_TLS_KEY) return undefined;
  const ca = readSecretFile('TOCK_GRPC_TLS_CA', config.TOCK_GRPC_TLS_CA, problems);
  const cert = readSecretFile('TOCK_GRPC_TLS_CERT', config.TOCK_GRPC_TLS_CERT, problems);
  const key = readSecretFile('TOCK_GRPC_TLS_KEY', config.TOCK_GRPC_TLS_KEY, problems);
  if (!ca || !cert || !key) return undefined;
  return { ca, cert, key, serverName: config.TOCK_GRPC_TLS_SERVER_NAME };
}

const INSECURE_WARNING =
  'TOCK_GRPC_INSECURE=1: gRPC calls are NOT authenticated; anyone who reaches this port can read and change every account. Use it only on a network you fully trust.';

/** Reads the credentials of one identity; throws a ConfigError naming each missing or unreadable variable. */
export function grpcCredentials(config: GrpcSecurityConfig, identity: 'service' | 'admin', log: Logger): GrpcCredentials {
  const problems: string[] = [];
  const tls = tlsOf(config, problems);
  const serviceToken = tokenOf(config, 'TOCK_GRPC_TOKEN', problems);
  const adminToken = identity === 'admin' ? tokenOf(config, 'TOCK_ADMIN_TOKEN', problems) : undefined;
  if (problems.length) throw new ConfigError(problems);
  if (identity === 'admin') {
    if (adminToken && adminToken === serviceToken) throw new ConfigError(['TOCK_ADMIN_TOKEN: must differ from TOCK_GRPC_TOKEN (the gateway holds that one)']);
    if (adminToken) return { tls, token: adminToken };
  } else if (tls || serviceToken) {
    return { tls, token: serviceToken };
  }
  if (config.TOCK_GRPC_INSECURE) {
    log.warn(`!!! ${identity === 'admin' ? 'admin calls' : 'service calls'}: ${INSECURE_WARNING}`);
    return { tls };
  }
  throw new ConfigError([
    identity === 'admin'
      ? 'TOCK_ADMIN_TOKEN: required for the admin service (accounts, tokens); set it or TOCK_ADMIN_TOKEN_FILE, distinct from TOCK_GRPC_TOKEN (or TOCK_GRPC_INSECURE=1 to leave it open)'
      : 'TOCK_GRPC_TOKEN: gRPC needs credentials: set TOCK_GRPC_TLS_CA, TOCK_GRPC_TLS_CERT and TOCK_GRPC_TLS_KEY (mutual TLS) and/or TOCK_GRPC_TOKEN or TOCK_GRPC_TOKEN_FILE (or TOCK_GRPC_INSECURE=1 to run without)',
  ]);
}

/** For a main(): the credentials, or one line per problem on stderr and exit 1. */
export function grpcCredentialsOrExit(config: GrpcSecurityConfig, identity: 'service' | 'admin', log: Logger): GrpcCredentials {
  try {
    return grpcCredentials(config, identity, log);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const line of error.problems) process.stderr.write(`config error: ${line}\n`);
    process.exit(1);
  }
}

/** One process talking to itself over loopback (embedded mode, the CLI's local mode): fresh random tokens, never written anywhere. */
export const loopbackCredentials = () => ({ service: { token: randomToken() }, admin: { token: randomToken() } });
