import { create } from '@bufbuild/protobuf';
import { expect } from 'chai';
import { ExecutionOutcome, ExecutionSchema } from '../../../shared/gen/tock/v1/events_pb.ts';
import { LogEntrySchema } from '../../../shared/gen/tock/v1/logs_pb.ts';
import { logRecord } from '../../../services/gateway/records.ts';

describe('cron_logs result (logRecord)', () => {
  const entry = (missed: number) =>
    create(LogEntrySchema, { id: 3n, execution: create(ExecutionSchema, { runId: '7:1800000060000', time: 1_800_000_060n, outcome: ExecutionOutcome.SUCCEEDED, httpStatus: 200, missed }) });

  it('says how many occurrences a late run after downtime stands for, and 0 for an ordinary run', () => {
    expect(logRecord(entry(42)).result).to.include({ time: 1_800_000_060, status: 0, missed: 42 });
    expect(logRecord(entry(0)).result).to.include({ missed: 0 });
  });
});
