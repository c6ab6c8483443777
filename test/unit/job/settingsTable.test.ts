import { ScalarType, type DescField, type DescMessage } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { RunTargetSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { CronJobSchema, JobSettingsSchema } from '../../../shared/gen/tock/v1/jobs_pb.ts';
import { settingsFromProto, settingsToProtoJob } from '../../../shared/grpc/jobSettingsProto.ts';
import {
  SETTING_NAMES,
  TARGET_SETTINGS,
  defaultSettings,
  evolveJob,
  resolveSettings,
  secretFlag,
  settingOf,
  type JobSettings,
  type SettingKind,
} from '../../../shared/job/index.ts';

/** What each kind must be on the wire (proto3 `optional` gives explicit presence). */
const WIRE: Record<SettingKind, { scalar: ScalarType; optional: boolean }> = {
  text: { scalar: ScalarType.STRING, optional: false },
  int: { scalar: ScalarType.INT32, optional: false },
  bool: { scalar: ScalarType.BOOL, optional: false },
  optionalInt: { scalar: ScalarType.INT32, optional: true },
  ref: { scalar: ScalarType.INT64, optional: true },
};

const fields = (m: DescMessage) => new Map(m.fields.map((f) => [f.localName, f]));
const wire = (f: DescField) => ({ scalar: f.fieldKind === 'scalar' ? f.scalar : undefined, optional: f.proto.proto3Optional === true });

/** The fields of proto CronJob that are the job's state, not a setting. */
const CRON_JOB_STATE = ['id', 'accountId', 'fail', 'status', 'points', 'pausedUntil', 'nextRun', 'createdAt', 'updatedAt', 'deleted'];

describe('the SETTINGS table and the proto messages', () => {
  it('every proto JobSettings field has a row and every row a field, of the kind the row says', () => {
    const proto = fields(JobSettingsSchema);
    expect([...proto.keys()].sort()).to.deep.equal([...SETTING_NAMES].sort());
    for (const name of SETTING_NAMES) {
      const f = proto.get(name)!;
      // On input every setting may be absent ("unchanged"), so every field has presence.
      expect({ name, scalar: wire(f).scalar, optional: wire(f).optional }).to.deep.equal({ name, scalar: WIRE[settingOf(name).kind].scalar, optional: true });
    }
  });

  it('proto CronJob carries every setting (a secret one as has<Name>) plus the job state, nothing else', () => {
    const proto = fields(CronJobSchema);
    const expected = SETTING_NAMES.map((name) => (settingOf(name).secret ? secretFlag(name) : name));
    expect([...proto.keys()].sort()).to.deep.equal([...expected, ...CRON_JOB_STATE].sort());
    for (const name of SETTING_NAMES) {
      const row = settingOf(name);
      const f = proto.get(row.secret ? secretFlag(name) : name)!;
      const want = row.secret ? { scalar: ScalarType.BOOL, optional: false } : WIRE[row.kind];
      expect({ name, ...wire(f) }).to.deep.equal({ name, ...want });
    }
  });

  it("proto RunTarget carries exactly the rows marked target (plus the job's ids and the account's signing keys)", () => {
    const proto = fields(RunTargetSchema);
    expect([...proto.keys()].sort()).to.deep.equal([...TARGET_SETTINGS, 'jobId', 'accountId', 'signingSecrets'].sort());
    for (const name of TARGET_SETTINGS) expect({ name, ...wire(proto.get(name)!) }).to.deep.equal({ name, ...WIRE[settingOf(name).kind] });
  });
});

describe('settings derived from the table', () => {
  const resolved: JobSettings = resolveSettings({ ...defaultSettings('Europe/Paris') }, { url: 'example.com/x', group: 7, notifyTime: 60, password: 'pw' }, 1);

  it('defaults: the documented values, the account zone, no url', () => {
    expect(defaultSettings('Asia/Tokyo')).to.deep.include({ timezone: 'Asia/Tokyo', expression: '15 minutes', timeout: 30, failureThreshold: 20, notify: true, group: null, notifyTime: null, httpMethod: 'GET', url: '' });
  });

  it('resolveSettings normalizes, and turns 0 into "none" for notifyTime and group', () => {
    expect(resolved.url).to.equal('http://example.com/x');
    const cleared = resolveSettings(resolved, { group: 0, notifyTime: 0, httpMethod: 'post' as never }, 1);
    expect(cleared).to.deep.include({ group: null, notifyTime: null, httpMethod: 'POST' });
  });

  it('proto round trip: CronJob hides the password; JobSettings input comes back as it went', () => {
    const out = settingsToProtoJob(resolved) as Record<string, unknown>;
    expect(out).to.not.have.property('password');
    expect(out).to.include({ hasPassword: true, group: 7n, notifyTime: 60 });
    expect(settingsToProtoJob({ ...resolved, group: null, notifyTime: null })).to.include({ group: undefined, notifyTime: undefined });
    expect(settingsFromProto({ url: 'u', group: 3n, notifyTime: 0, notify: false })).to.deep.equal({ url: 'u', group: 3, notifyTime: 0, notify: false });
    expect(settingsFromProto(undefined)).to.deep.equal({});
  });

  it('a job created before a setting existed folds with that setting at its default', () => {
    const { failureThreshold: _, notifyTime: __, ...old } = resolved;
    const job = evolveJob(null, { type: 'JobCreated', data: { id: 1, accountId: 1, settings: old as JobSettings, at: 1 } })!;
    expect(job.settings).to.deep.equal({ ...resolved, failureThreshold: 20, notifyTime: null });
    const complete = evolveJob(null, { type: 'JobCreated', data: { id: 1, accountId: 1, settings: resolved, at: 1 } })!;
    expect(complete.settings, 'complete settings are kept as they are').to.equal(resolved);
  });
});
