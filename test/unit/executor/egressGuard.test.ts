// chai 6 ships no type declarations and @types/chai is not installed (yet); expect is `any` until then.
import { expect } from 'chai';
import fc from 'fast-check';
import type { LookupAddress } from 'node:dns';
import { createEgressGuard, isEgressRefused, parseCidr, parseIp, type EgressRefusedError } from '../../../shared/egressGuard.ts';

describe('egress guard', () => {
  const guard = createEgressGuard([]);

  const refused: Array<[string, string]> = [
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fc00::1', 'private'],
    ['fdff:1234::9', 'private'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['100.64.0.1', 'shared (CGNAT)'],
    ['100.127.255.254', 'shared (CGNAT)'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    // IPv4-mapped and other IPv6 spellings of refused IPv4 addresses.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::FFFF:10.0.0.1', 'private'],
    ['::ffff:a9fe:a9fe', 'cloud metadata'],
    ['::ffff:192.168.0.1', 'private'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['2002:a00:1::', 'private'],
    ['::127.0.0.1', 'reserved'],
    ['[::1]', 'loopback'],
    ['fe80::1%eth0', 'link-local'],
  ];

  for (const [ip, reason] of refused) {
    it(`refuses ${ip} as ${reason}`, () => {
      expect(guard.isAllowed(ip)).to.equal(false);
      expect(guard.refusal(ip)?.message).to.equal(`refused by egress policy: ${ip} is not an allowed target`);
      expect(guard.refusal(ip)?.detail).to.equal(`${ip} is a ${reason} address`);
    });
  }

  const allowed = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '192.169.0.1', '2606:4700:4700::1111', '2001:db8::1', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'];
  for (const ip of allowed) {
    it(`allows public ${ip}`, () => {
      expect(guard.isAllowed(ip)).to.equal(true);
      expect(guard.refusal(ip)).to.equal(null);
    });
  }

  it('refuses what is not an IP address at all, including inet_aton tricks', () => {
    for (const s of ['', 'localhost', '127.1', '0x7f.0.0.1', '0177.0.0.1', '2130706433', '1.2.3.4.5', '::1::', '1:2:3:4:5:6:7:8:9', '256.0.0.1']) {
      expect(guard.isAllowed(s), s).to.equal(false);
    }
  });

  it('opens exactly the networks the operator lists, in either IP spelling', () => {
    const open = createEgressGuard(['127.0.0.0/8', '::1/128', ' 10.0.0.0/24 ', '']);
    expect(open.isAllowed('127.0.0.1')).to.equal(true);
    expect(open.isAllowed('::1')).to.equal(true);
    expect(open.isAllowed('::ffff:127.0.0.1')).to.equal(true);
    expect(open.isAllowed('10.0.0.200')).to.equal(true);
    expect(open.isAllowed('10.0.1.1')).to.equal(false);
    expect(open.isAllowed('192.168.1.1')).to.equal(false);
    expect(createEgressGuard(['169.254.169.254']).isAllowed('169.254.169.254')).to.equal(true);
  });

  it('refuses to start with a malformed allow entry', () => {
    for (const bad of ['10.0.0.0/33', 'example.com', '::1/129', '1.2.3.4/8/9', '10.0.0.0/x']) {
      expect(() => createEgressGuard([bad]), bad).to.throw(/not an IP address or CIDR/);
    }
  });

  it('parses addresses and CIDRs', () => {
    expect([...parseIp('1.2.3.4')!]).to.deep.equal([1, 2, 3, 4]);
    expect([...parseIp('::ffff:1.2.3.4')!]).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect([...parseIp('1::')!].slice(0, 2)).to.deep.equal([0, 1]);
    expect(parseCidr('fc00::/7')?.prefix).to.equal(7);
    expect(parseCidr('8.8.8.8')?.prefix).to.equal(32);
  });

  it('never throws on any string', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        expect(typeof guard.isAllowed(s)).to.equal('boolean');
      }),
    );
  });

  describe('lookup', () => {
    type Answer = LookupAddress[] | Error;
    /** A resolver that answers what the test says, like a DNS server an attacker controls. */
    const fakeResolver = (answers: Record<string, Answer>) => (host: string, _opts: unknown, cb: (e: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
      const a = answers[host] ?? Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      setImmediate(() => (a instanceof Error ? cb(a, []) : cb(null, a)));
    };
    const lookupOf = (g: ReturnType<typeof createEgressGuard>, host: string, options: object) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown; family?: number }>((resolve) =>
        g.lookup(host, options, (err, address, family) => resolve({ err, address, family })),
      );

    const g = createEgressGuard([], fakeResolver({
      'public.test': [{ address: '93.184.216.34', family: 4 }],
      'rebind.test': [{ address: '127.0.0.1', family: 4 }],
      'mixed.test': [{ address: '10.0.0.5', family: 4 }, { address: '2606:4700::1', family: 6 }, { address: '93.184.216.34', family: 4 }],
      'mapped.test': [{ address: '::ffff:169.254.169.254', family: 6 }],
    }));

    it('passes public addresses through, in the one-address and all forms', async () => {
      expect(await lookupOf(g, 'public.test', {})).to.deep.equal({ err: null, address: '93.184.216.34', family: 4 });
      const all = await lookupOf(g, 'public.test', { all: true });
      expect(all.err).to.equal(null);
      expect(all.address).to.deep.equal([{ address: '93.184.216.34', family: 4 }]);
    });

    it('answers an EgressRefusedError when every address is refused, naming the address only in its detail', async () => {
      const { err } = await lookupOf(g, 'rebind.test', { all: true });
      expect(isEgressRefused(err)).to.equal(true);
      expect(err?.message).to.equal('refused by egress policy: rebind.test is not an allowed target');
      expect((err as EgressRefusedError).detail).to.equal('rebind.test resolved to 127.0.0.1, a loopback address');
      const mapped = await lookupOf(g, 'mapped.test', {});
      expect(mapped.err?.message).to.equal('refused by egress policy: mapped.test is not an allowed target');
      expect((mapped.err as EgressRefusedError).detail).to.equal('mapped.test resolved to ::ffff:169.254.169.254, a cloud metadata address');
    });

    it('filters refused addresses out of a mixed answer', async () => {
      expect((await lookupOf(g, 'mixed.test', {})).address).to.equal('2606:4700::1');
      expect((await lookupOf(g, 'mixed.test', { all: true })).address).to.deep.equal([
        { address: '2606:4700::1', family: 6 },
        { address: '93.184.216.34', family: 4 },
      ]);
    });

    it('passes DNS errors through unchanged', async () => {
      const { err } = await lookupOf(g, 'nothing.test', {});
      expect(err?.code).to.equal('ENOTFOUND');
    });

    it('refuses localhost through the real resolver', async () => {
      const { err } = await lookupOf(createEgressGuard([]), 'localhost', { all: true });
      expect(isEgressRefused(err)).to.equal(true);
    });
  });
});
