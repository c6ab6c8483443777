import { isEgressRefused } from '../../shared/egressGuard.ts';

// Failures where no connection came up at all: FC retries these once.
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ETIMEDOUT', 'ECONNRESET', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

const codeOf = (e: unknown): string => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : '';
};

export function isConnectFailure(e: unknown): boolean {
  if (isEgressRefused(e)) return false;
  if (e instanceof AggregateError && e.errors.length > 0) return e.errors.every(isConnectFailure);
  return CONNECT_CODES.has(codeOf(e));
}

/** A transport error as a sentence for the run log. */
export function describeError(e: unknown, host: string): string {
  const code = codeOf(e);
  const err = e as { message?: string; address?: string; port?: number } | null;
  const where = err?.address ? `${err.address}${err.port ? `:${err.port}` : ''}` : host;
  if (isEgressRefused(e)) return (e as Error).message;
  if (e instanceof AggregateError && e.errors.length > 0) return describeError(e.errors[0], host);
  switch (code) {
    case 'ECONNREFUSED': return `connection refused by ${where}`;
    case 'ENOTFOUND': return `DNS lookup failed: host ${host} not found`;
    case 'EAI_AGAIN': return `DNS lookup failed temporarily for host ${host}`;
    case 'ETIMEDOUT': case 'UND_ERR_CONNECT_TIMEOUT': return `could not connect to ${host}: connect timeout`;
    case 'EHOSTUNREACH': case 'ENETUNREACH': return `could not connect to ${where}: network unreachable`;
    case 'ECONNRESET': return `connection reset by ${where}`;
    case 'UND_ERR_SOCKET': return `connection closed by ${host} before the response was complete`;
  }
  if (code.startsWith('ERR_TLS') || /CERT|SSL|TLS/.test(code)) return `TLS error with ${host}: ${err?.message ?? code}`;
  const message = err?.message || String(e);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
