import { expect } from 'chai';
import {
  batchDecider,
  channelDecider,
  pendingSpan,
  FIRST_GATHER_MS,
  notificationDueAt,
  CHANNEL_FAILURE_LIMIT,
  decideDelivery,
  evolveDelivery,
  MAX_ATTEMPTS,
  retryDelay,
  routesFor,
  type Channel,
  type DeliveryEvent,
  type DeliveryState,
  type Trigger,
} from '../../../shared/notify/index.ts';

const NOW = 1_800_000_000_000;

const trigger = (jobId: number, key: string, at = NOW, channels: number[] | null = null): Trigger => ({
  key,
  kind: 'failed',
  reasons: ['the run failed'],
  at,
  fail: 1,
  job: { id: jobId, accountId: 1, name: `job ${jobId}`, url: 'https://example.com', group: null, groupName: '', failureThreshold: 20, channels },
  execution: { runId: key, time: NOW / 1000, failed: true, httpStatus: 500, error: 'HTTP status 500', output: '', downloaded: 0, executionTime: 0.1 },
});

/** Channels as the dispatcher hands them over: ids, none of them an escalation channel. */
const plain = (...ids: number[]) => ids.map((id) => ({ id, escalateAfter: 0 }));

const replay = (events: DeliveryEvent[]) => events.reduce(evolveDelivery, {} as DeliveryState);

describe('merging, delivery and channel rules (shared/notify)', () => {
  describe('merge window', () => {
    it('the span of pending triggers: the oldest and the newest', () => {
      expect(pendingSpan([{ at: NOW + 5 }, { at: NOW }, { at: NOW + 59_000 }])).to.deep.equal({ oldest: NOW, newest: NOW + 59_000 });
      expect(pendingSpan([])).to.equal(null);
    });

    it('a quiet account\'s first notification is due once triggers stop for the gather (at most a window); later ones when the window after the last closes', () => {
      expect(FIRST_GATHER_MS).to.equal(2_000);
      const at = (oldest: number, newest = oldest) => ({ oldest, newest });
      // Never notified, or not within the window: the gather after the newest trigger.
      expect(notificationDueAt(at(NOW), undefined, 60_000)).to.equal(NOW + 2_000);
      expect(notificationDueAt(at(NOW), NOW - 60_000, 60_000)).to.equal(NOW + 2_000);
      expect(notificationDueAt(at(NOW, NOW + 1_500), undefined, 60_000), 'a burst still coming').to.equal(NOW + 3_500);
      expect(notificationDueAt(at(NOW, NOW + 59_000), undefined, 60_000), 'but never later than the window').to.equal(NOW + 60_000);
      // Notified 10 s before: merged until the window after that notification closes.
      expect(notificationDueAt(at(NOW), NOW - 10_000, 60_000)).to.equal(NOW + 50_000);
      expect(notificationDueAt(at(NOW), NOW - 59_000, 60_000), 'the window ends 1 s later, before the gather').to.equal(NOW + 2_000);
      // A window shorter than the gather caps it; no window: at once.
      expect(notificationDueAt(at(NOW), undefined, 500)).to.equal(NOW + 500);
      expect(notificationDueAt(at(NOW), NOW, 0)).to.equal(NOW);
    });

    it('500 triggers at once are one notification; the same triggers are never decided twice', () => {
      const triggers = Array.from({ length: 500 }, (_, i) => trigger(i + 1, `r${i}:failed`));
      const events = batchDecider.decide({ id: 'n1', accountId: 1, triggers, channels: plain(3, 4) }, batchDecider.initialState(), NOW);
      expect(events).to.have.length(1);
      expect(events[0]!.data.routes.map((r) => [r.channelId, r.keys.length])).to.deep.equal([[3, 500], [4, 500]]);
      const state = events.reduce(batchDecider.evolve, batchDecider.initialState());
      expect(batchDecider.decide({ id: 'n2', accountId: 1, triggers, channels: plain(3) }, state, NOW)).to.deep.equal([]);
    });

    it('a job naming channels is routed only to those; a channel with nothing to say gets nothing', () => {
      const routes = routesFor([trigger(1, 'a', NOW, [4]), trigger(2, 'b')], plain(3, 4, 5));
      expect(routes).to.deep.equal([{ channelId: 3, keys: ['b'] }, { channelId: 4, keys: ['a', 'b'] }, { channelId: 5, keys: ['b'] }]);
      expect(routesFor([trigger(1, 'a', NOW, [9])], plain(3))).to.deep.equal([]);
    });

    it('an escalation channel takes only the triggers of a failure past its threshold; the others all but escalation-only ones', () => {
      const t = (key: string, over: Partial<Trigger>) => ({ ...trigger(1, key), ...over });
      const triggers = [t('early', {}), t('late', { escalated: 30 }), t('later', { escalated: 120 }), t('only', { escalated: 30, onlyEscalation: true })];
      const channels = [{ id: 3, escalateAfter: 0 }, { id: 4, escalateAfter: 30 }, { id: 5, escalateAfter: 120 }, { id: 6, escalateAfter: 240 }];
      expect(routesFor(triggers, channels)).to.deep.equal([
        { channelId: 3, keys: ['early', 'late', 'later'] },
        { channelId: 4, keys: ['late', 'later', 'only'] },
        { channelId: 5, keys: ['later'] },
      ]);
    });
  });

  describe('delivery claims', () => {
    it('claim, then a second claim inside the lease is refused', () => {
      const claimed = decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 30_000 }, {}, NOW);
      expect(claimed).to.deep.equal([{ type: 'DeliveryClaimed', data: { channelId: 3, attempt: 1, until: NOW + 30_000, at: NOW } }]);
      expect(decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 30_000 }, replay(claimed), NOW + 29_999)).to.deep.equal([]);
    });

    it('a crashed claim (lease over) is claimed again as the next attempt', () => {
      const state = replay(decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 30_000 }, {}, NOW));
      expect(decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 30_000 }, state, NOW + 30_000)[0]!.data).to.include({ attempt: 2 });
    });

    it('delivered is final; a late sender of an older attempt records nothing', () => {
      const full = [...decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 10 }, {}, NOW)];
      const s1 = replay(full);
      full.push(...decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 10 }, s1, NOW + 10));
      const s2 = replay(full);
      expect(decideDelivery({ type: 'Record', channelId: 3, attempt: 1, ok: true, error: '', retryAt: null }, s2, NOW + 11)).to.deep.equal([]);
      full.push(...decideDelivery({ type: 'Record', channelId: 3, attempt: 2, ok: true, error: '', retryAt: null }, s2, NOW + 11));
      expect(replay(full)['3']!.status).to.equal('delivered');
      expect(decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 10 }, replay(full), NOW + 99_999)).to.deep.equal([]);
    });

    it('a failed attempt waits until its retry time; the last attempt gives up', () => {
      const events: DeliveryEvent[] = [];
      let at = NOW;
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        events.push(...decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 1000 }, replay(events), at));
        events.push(...decideDelivery({ type: 'Record', channelId: 3, attempt, ok: false, error: 'HTTP 500', retryAt: at + 5000 }, replay(events), at + 1));
        expect(decideDelivery({ type: 'Claim', channelId: 3, leaseMs: 1000 }, replay(events), at + 4000)).to.deep.equal([]);
        at += 5000;
      }
      expect(replay(events)['3']).to.include({ status: 'abandoned', attempts: MAX_ATTEMPTS, lastError: 'HTTP 500' });
    });

    it('backoff doubles with jitter and honours Retry-After', () => {
      const policy = { baseMs: 1000, maxMs: 60_000 };
      expect([1, 2, 3, 4].map((a) => retryDelay(a, policy, null, () => 0.5))).to.deep.equal([1000, 2000, 4000, 8000]);
      expect(retryDelay(1, policy, null, () => 0)).to.equal(500);
      expect(retryDelay(1, policy, null, () => 0.999)).to.equal(1499);
      expect(retryDelay(10, policy, null, () => 0.5)).to.equal(60_000);
      expect(retryDelay(1, policy, 120_000, () => 0.5)).to.equal(120_000);
    });
  });

  describe('channels', () => {
    const add = (type: string, address: object) =>
      channelDecider.decide({ type: 'AddChannel', id: 3, accountId: 1, channelType: type, name: ' ops ', address, secret: 's3cret' }, null, NOW);
    const added = (type: string, address: object): Channel => add(type, address).reduce(channelDecider.evolve, null)!;

    it('validates each type\'s address and names the parameter', () => {
      expect(() => add('pager', {})).to.throw(/type: must be one of email, webhook, slack, discord, teams, telegram/);
      expect(() => add('email', { email: 'nope' })).to.throw(/email: "nope" is not an email address/);
      expect(() => add('slack', {})).to.throw(/url: is required/);
      expect(() => add('webhook', { url: 'ftp://x' })).to.throw(/url: scheme must be http or https/);
      expect(() => add('telegram', { botToken: '123:abcdefghijklmnopqrstuvwxyz', chatId: 'me' })).to.throw(/chatId/);
      expect(added('telegram', { botToken: '123:abcdefghijklmnopqrstuvwxyz', chatId: '-100123' })).to.include({ type: 'telegram', name: 'ops', secret: '' });
      expect(added('webhook', { url: 'https://example.com/hook' })).to.include({ secret: 's3cret' });
    });

    it(`${CHANNEL_FAILURE_LIMIT} failed attempts in a row disable it with the last error; a success in between resets`, () => {
      let channel: Channel | null = added('webhook', { url: 'https://example.com/hook' });
      const attempt = (ok: boolean, error = 'HTTP 500') => {
        channel = channelDecider.decide({ type: 'RecordAttempt', id: 3, ok, error }, channel, NOW).reduce(channelDecider.evolve, channel);
      };
      for (let i = 0; i < 4; i++) attempt(false);
      attempt(true);
      expect(channel).to.include({ failures: 0, enabled: true });
      for (let i = 0; i < 4; i++) attempt(false);
      attempt(false, 'HTTP 503 Service Unavailable');
      expect(channel).to.include({ enabled: false, failures: 5, lastError: 'HTTP 503 Service Unavailable' });
      const edited = channelDecider.decide({ type: 'EditChannel', id: 3, accountId: 1, enabled: true }, channel, NOW).reduce(channelDecider.evolve, channel);
      expect(edited).to.include({ enabled: true, failures: 0 });
    });

    it("another account's channel is not found", () => {
      expect(() => channelDecider.decide({ type: 'DeleteChannel', id: 3, accountId: 2 }, added('slack', { url: 'https://hooks.slack.com/x' }), NOW)).to.throw(/channel 3 not found/);
    });
  });
});
