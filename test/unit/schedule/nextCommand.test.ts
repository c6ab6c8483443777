import { expect } from 'chai';
import { nextCommand } from '../../../services/cli/nextCommand.ts';

async function run(...args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await nextCommand(args, (l) => out.push(l), (l) => err.push(l));
  return { code, out, err };
}

describe('tock next (nextCommand)', () => {
  it('prints one ISO-8601 UTC instant per line, strictly after --from for crontab', async () => {
    const r = await run('41 3 * * 2', '--tz', 'Europe/London', '--from', '2024-10-16T10:00:00Z', '--count', '3');
    expect(r).to.deep.equal({ code: 0, out: ['2024-10-22T02:41:00Z', '2024-10-29T03:41:00Z', '2024-11-05T03:41:00Z'], err: [] });
  });

  it('treats --from as the previous run for intervals, and accepts unix seconds', async () => {
    const r = await run('1 day', '--from', '1723169952', '--count', '2');
    expect(r.out).to.deep.equal(['2024-08-10T02:19:12Z', '2024-08-11T02:19:12Z']);
  });

  it('applies --filter and defaults to 10 runs in UTC', async () => {
    const r = await run('0 8 * * *', '--filter', "weekday == 'Mon'", '--from', '2024-10-16T10:00:00Z');
    expect(r.code).to.equal(0);
    expect(r.out).to.have.length(10);
    expect(r.out[0]).to.equal('2024-10-21T08:00:00Z');
  });

  it('accepts the argv with the command word, as main.ts may pass it', async () => {
    const r = await run('next', '@1905821065', '--from', '2024-10-16T10:00:00Z');
    expect(r.out).to.deep.equal(['2030-05-24T02:44:25Z']);
  });

  it('prints nothing for manual or a past one-time, and exits 0', async () => {
    expect(await run('manual')).to.deep.equal({ code: 0, out: [], err: [] });
    expect(await run('Oct 16, 2024 07:50 PM', '--from', '2025-01-01T00:00:00Z')).to.deep.equal({ code: 0, out: [], err: [] });
  });

  it('seeds R with --job-id and describes with --describe (on stderr)', async () => {
    const r = await run('R R * * *', '--job-id', '1', '--from', '2025-01-01T00:00:00Z', '--count', '1', '--describe');
    expect(r.out).to.deep.equal(['2025-01-01T04:21:00Z']);
    expect(r.err).to.deep.equal(['At a random minute, at a random hour (UTC)']);
  });

  it('exits 1 with the validation message for an invalid schedule', async () => {
    const bad = await run('0 0 * Jam *');
    expect(bad.code).to.equal(1);
    expect(bad.out).to.deep.equal([]);
    expect(bad.err[0]).to.equal("invalid expression: month field 'Jam' at column 7: unknown month name 'Jam' (use Jan..Dec or 1-12)");
    expect((await run('0 8 * * *', '--filter', 'day ==')).err[0]).to.match(/^invalid filter: filter 'day ==' at column 7/);
    expect((await run('0 8 * * *', '--tz', 'Mars/Olympus_Mons')).err[0]).to.match(/^invalid timezone: unknown time zone/);
  });

  it('exits 2 on usage errors', async () => {
    for (const args of [[], ['a', 'b'], ['* * * * *', '--count', '0'], ['* * * * *', '--from', 'yesterday'], ['* * * * *', '--from', '2024-10-16T10:00:00'], ['* * * * *', '--bogus']]) {
      const r = await run(...args);
      expect(r.code, args.join(' ')).to.equal(2);
      expect(r.err.join('\n')).to.include('usage: tock next');
    }
  });
});
