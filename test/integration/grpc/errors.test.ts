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

  it('a field path names the parameter: a batch places an error inside its element, no text rewritten', () => {
    const error = new AppError('INVALID_PARAMETER', 'must not be empty', { field: ['url'] });
    expect(error.message).to.equal('url: must not be empty');
    const placed = error.within('data', 3);
    expect(placed).to.include({ kind: 'INVALID_PARAMETER', detail: 'must not be empty', message: 'data[3].url: must not be empty' });
    expect(placed.field).to.deep.equal(['data', 3, 'url']);
    expect(new AppError('INVALID_PARAMETER', 'must be an object', { field: ['data', 0] }).message).to.equal('data[0]: must be an object');
    expect(new AppError('INVALID_PARAMETER', 'must be an integer', { field: ['id', 2] }).message).to.equal('id[2]: must be an integer');
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
    addService(server, PlannerService, { nextRuns: fail, nextRunOf: fail, calendar: fail }, quiet);
    port = await startServer(server, '127.0.0.1:0', {});
  });
  after(() => stopServer(server));

  const kinds: ErrorKind[] = ['UNAVAILABLE', 'CONFLICT', 'NOT_FOUND', 'RATE_LIMITED', 'INVALID_PARAMETER'];
  it('the field path crosses the wire as a path: the caller can place it further', async () => {
    failure = new AppError('INVALID_PARAMETER', 'scheme must be http or https, got ftp', { field: ['data', 3, 'url'] });
    const client = createClient(PlannerService, `127.0.0.1:${port}`, {});
    try {
      const error = (await client.nextRuns({}).then(() => null, (e: unknown) => e)) as AppError;
      expect(error).to.be.instanceOf(AppError);
      expect(error.field).to.deep.equal(['data', 3, 'url']);
      expect(error).to.include({ detail: 'scheme must be http or https, got ftp', message: 'data[3].url: scheme must be http or https, got ftp' });
    } finally {
      client.close();
    }
  });

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
