import { status as GrpcStatus } from '@grpc/grpc-js';
import { expect } from 'chai';
import { AppError, ERROR_KINDS, ERROR_TABLE, type ErrorKind } from '../../../shared/errors.ts';
import { PlannerService } from '../../../shared/gen/tock/v1/planner_pb.ts';
import { addService, createClient, createGrpcServer, startServer, stopServer } from '../../../shared/grpc/bridge.ts';
import { GRPC_STATUS } from '../../../shared/grpc/grpcStatus.ts';
import type { Logger } from '../../../shared/log.ts';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => quiet };

describe('the error table', () => {
  it('UNAVAILABLE is code 1, HTTP 503, gRPC UNAVAILABLE', () => {
    expect(ERROR_TABLE.UNAVAILABLE).to.deep.equal({ code: 1, http: 503 });
    expect(GRPC_STATUS.UNAVAILABLE).to.equal(GrpcStatus.UNAVAILABLE);
    expect(new AppError('UNAVAILABLE', 'x')).to.include({ code: 1, httpStatus: 503 });
  });

  it('every kind has a gRPC status', () => {
    for (const kind of ERROR_KINDS) expect(GRPC_STATUS[kind], kind).to.be.a('number');
  });

  it('AppError keeps its cause (ES2022), for the log only', () => {
    const driver = new Error('SQLITE_BUSY: database is locked');
    const error = new AppError('UNAVAILABLE', 'event store (sqlite): busy', { cause: driver });
    expect(error.cause).to.equal(driver);
    expect(new AppError('INTERNAL', 'x').cause).to.equal(undefined);
  });
});

describe('errors over real gRPC', () => {
  let failure: unknown;
  let port: number;
  // No credentials here: this suite is about errors, test/e2e/grpcAuth.test.ts about doors.
  const server = createGrpcServer({});
  const fail = async (): Promise<never> => {
    throw failure;
  };

  before(async () => {
    addService(server, PlannerService, { nextRuns: fail, nextRunOf: fail }, quiet);
    port = await startServer(server, '127.0.0.1:0', {});
  });
  after(() => stopServer(server));

  const kinds: ErrorKind[] = ['UNAVAILABLE', 'CONFLICT', 'NOT_FOUND', 'RATE_LIMITED', 'INVALID_PARAMETER'];
  for (const kind of kinds) {
    it(`${kind} thrown by the service arrives as ${kind}, with status ${GrpcStatus[GRPC_STATUS[kind]]}`, async () => {
      failure = new AppError(kind, `failed as ${kind}`);
      const client = createClient(PlannerService, `127.0.0.1:${port}`, {});
      try {
        const error = await client.nextRuns({}).then(() => null, (e: unknown) => e);
        expect(error).to.be.instanceOf(AppError);
        expect(error).to.include({ kind, message: `failed as ${kind}` });
        expect((error as AppError).cause, 'the status on the wire').to.have.property('code', GRPC_STATUS[kind]);
      } finally {
        client.close();
      }
    });
  }

  it('a service nobody answers for is UNAVAILABLE, with the transport error as its cause', async () => {
    const gone = createGrpcServer({});
    const free = await startServer(gone, '127.0.0.1:0', {});
    await stopServer(gone);
    const client = createClient(PlannerService, `127.0.0.1:${free}`, {}, { deadlineMs: 2000 });
    try {
      const error = await client.nextRuns({}).then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(AppError);
      expect((error as AppError).kind).to.equal('UNAVAILABLE');
      expect((error as AppError).cause).to.have.property('code').that.is.oneOf([GrpcStatus.UNAVAILABLE, GrpcStatus.DEADLINE_EXCEEDED]);
    } finally {
      client.close();
    }
  });
});
