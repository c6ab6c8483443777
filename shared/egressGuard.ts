import dns from 'node:dns';
import type { LookupAddress, LookupAllOptions, LookupOneOptions } from 'node:dns';

/**
 * Which addresses a job may call. Jobs are user input, so without this guard any account could
 * make Tock probe the operator's own network or a cloud metadata endpoint (SSRF). The check runs
 * on the address actually connected to (a filtering dns.lookup, plus a literal-IP check), so a
 * hostname that resolves differently at connect time (DNS rebinding) gains nothing.
 */

/** An address as bytes: 4 for IPv4, 16 for IPv6. */
type IpBytes = Uint8Array;

export interface Cidr {
  bytes: IpBytes;
  prefix: number;
}

export function parseIp(text: string): IpBytes | null {
  if (typeof text !== 'string') return null;
  let s = text.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  return s.includes(':') ? parseIpv6(s) : parseIpv4(s);
}

function parseIpv4(s: string): IpBytes | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    // Strict dotted decimal: inet_aton's octal/hex forms are exactly how filters get bypassed.
    if (!/^(0|[1-9]\d{0,2})$/.test(parts[i]!)) return null;
    const n = Number(parts[i]);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIpv6(s: string): IpBytes | null {
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIpv4(item);
        if (!v4) return null;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

export function parseCidr(text: string): Cidr | null {
  const [addr, bits, extra] = String(text).trim().split('/');
  if (extra !== undefined || addr === undefined) return null;
  const bytes = parseIp(addr);
  if (!bytes) return null;
  const max = bytes.length * 8;
  if (bits === undefined) return { bytes, prefix: max };
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { bytes, prefix: Number(bits) };
}

export function inCidr(ip: IpBytes, cidr: Cidr): boolean {
  if (ip.length !== cidr.bytes.length) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((ip[i]! & mask) !== (cidr.bytes[i]! & mask)) return false;
  }
  return true;
}

const cidr = (text: string): Cidr => parseCidr(text)!;

// Order matters: the first match names the reason, so the narrow ranges come first.
const BLOCKED_V4: Array<[Cidr, string]> = [
  [cidr('169.254.169.254/32'), 'cloud metadata'],
  [cidr('255.255.255.255/32'), 'broadcast'],
  [cidr('0.0.0.0/8'), 'unspecified'],
  [cidr('10.0.0.0/8'), 'private'],
  [cidr('100.64.0.0/10'), 'shared (CGNAT)'],
  [cidr('127.0.0.0/8'), 'loopback'],
  [cidr('169.254.0.0/16'), 'link-local'],
  [cidr('172.16.0.0/12'), 'private'],
  [cidr('192.0.0.0/24'), 'reserved'],
  [cidr('192.168.0.0/16'), 'private'],
  [cidr('198.18.0.0/15'), 'reserved'],
  [cidr('224.0.0.0/4'), 'multicast'],
  [cidr('240.0.0.0/4'), 'reserved'],
];

const BLOCKED_V6: Array<[Cidr, string]> = [
  [cidr('fd00:ec2::254/128'), 'cloud metadata'],
  [cidr('::/128'), 'unspecified'],
  [cidr('::1/128'), 'loopback'],
  // IPv4-compatible (deprecated): never a legitimate target.
  [cidr('::/96'), 'reserved'],
  [cidr('fc00::/7'), 'private'],
  [cidr('fe80::/10'), 'link-local'],
  [cidr('fec0::/10'), 'private'],
  [cidr('ff00::/8'), 'multicast'],
];

/** IPv6 forms that carry an IPv4 address the packet may end up at. */
const EMBEDDING_V6: Array<[Cidr, number]> = [
  [cidr('::ffff:0:0/96'), 12], // IPv4-mapped
  [cidr('64:ff9b::/96'), 12], // NAT64
  [cidr('2002::/16'), 2], // 6to4
];

function embeddedV4(ip: IpBytes): IpBytes | null {
  if (ip.length !== 16) return null;
  for (const [range, offset] of EMBEDDING_V6) {
    if (inCidr(ip, range)) return ip.slice(offset, offset + 4);
  }
  return null;
}

/**
 * A target the egress policy refuses. The message is what the tenant sees (a run's or a
 * delivery's error): only that the host is not allowed, never the address it resolved to nor why
 * that address is refused, so a tenant cannot map the operator's internal names with it. The
 * operator's log takes `detail`.
 */
export class EgressRefusedError extends Error {
  readonly code = 'ETOCKEGRESS';
  constructor(
    readonly ip: string,
    readonly reason: string,
    /** The host as the tenant wrote it: a name, or the address itself. */
    readonly host: string = ip,
  ) {
    super(`refused by egress policy: ${host} is not an allowed target`);
    this.name = 'EgressRefusedError';
  }

  /** For the operator's log only. */
  get detail(): string {
    return this.host === this.ip ? `${this.ip} is a ${this.reason} address` : `${this.host} resolved to ${this.ip}, a ${this.reason} address`;
  }
}

export const isEgressRefused = (e: unknown): e is EgressRefusedError =>
  e instanceof EgressRefusedError || (e as { code?: unknown } | null)?.code === 'ETOCKEGRESS';

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
export type LookupFunction = (hostname: string, options: unknown, callback: LookupCallback) => void;
type Resolver = (hostname: string, options: LookupAllOptions, cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

export interface EgressGuard {
  isAllowed(ip: string): boolean;
  /** Why `ip` is refused, as a sentence; null when it may be called. */
  refusal(ip: string): EgressRefusedError | null;
  /** dns.lookup-compatible; answers only allowed addresses, or an EgressRefusedError. */
  lookup: LookupFunction;
}

/**
 * `allow`: CIDRs the operator opens up (TOCK_ALLOW_NETWORKS), e.g. `127.0.0.0/8` for a target on
 * the same host. A bad entry throws at start-up: a typo must not silently open or close egress.
 * `resolve` is injectable so tests can play a rebinding DNS server.
 */
export function createEgressGuard(allow: string[], resolve: Resolver = dns.lookup): EgressGuard {
  const allowed = allow
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const c = parseCidr(s);
      if (!c) throw new Error(`allowed network "${s}" is not an IP address or CIDR`);
      return c;
    });

  const refusal = (ip: string): EgressRefusedError | null => {
    const raw = parseIp(ip);
    if (!raw) return new EgressRefusedError(String(ip), 'malformed');
    const v4 = raw.length === 4 ? raw : embeddedV4(raw);
    // An allow entry matches either spelling, so `127.0.0.0/8` also opens ::ffff:127.0.0.1.
    if (allowed.some((c) => inCidr(raw, c) || (v4 !== null && inCidr(v4, c)))) return null;
    const table = raw.length === 4 ? BLOCKED_V4 : BLOCKED_V6;
    for (const [range, reason] of table) if (inCidr(raw, range)) return new EgressRefusedError(ip, reason);
    if (v4 && raw.length === 16) {
      for (const [range, reason] of BLOCKED_V4) if (inCidr(v4, range)) return new EgressRefusedError(ip, reason);
    }
    return null;
  };

  const lookup: LookupFunction = (hostname, options, callback) => {
    const opts: LookupOneOptions & { all?: boolean } =
      typeof options === 'number' ? { family: options } : typeof options === 'object' && options !== null ? options : {};
    const cb: LookupCallback = typeof options === 'function' ? (options as LookupCallback) : callback;
    try {
      resolve(hostname, { ...opts, all: true }, (err, addresses) => {
        if (err) return cb(err, opts.all ? [] : '', undefined);
        const list = Array.isArray(addresses) ? addresses : [];
        const ok = list.filter((a) => refusal(a.address) === null);
        if (ok.length === 0) {
          const first = list[0];
          const e = first ? new EgressRefusedError(first.address, refusal(first.address)!.reason, hostname) : Object.assign(new Error(`DNS lookup of ${hostname} returned no address`), { code: 'ENOTFOUND' });
          return cb(e, opts.all ? [] : '', undefined);
        }
        if (opts.all) cb(null, ok);
        else cb(null, ok[0]!.address, ok[0]!.family);
      });
    } catch (e) {
      cb(e as NodeJS.ErrnoException, opts.all ? [] : '', undefined);
    }
  };

  return { isAllowed: (ip) => refusal(ip) === null, refusal, lookup };
}
