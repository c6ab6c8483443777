import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createHttpCaller, type HttpCaller } from '../../../services/executor/httpCall.ts';
import type { RequestSpec } from '../../../services/executor/buildRequest.ts';
import { waitFor } from '../../support/waitFor.ts';

/** A real server that notes each connection, and for each request the connection it came on. */
async function socketServer() {
  const sockets: Socket[] = [];
  const requests: Socket[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.socket);
    res.end('ok');
  });
  server.on('connection', (s: Socket) => sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return { url, sockets, requests, close };
}

const get = (url: string): RequestSpec => ({ method: 'GET', url, headers: {}, body: null, timeoutMs: 5000 });
const soon = () => Date.now() + 60_000;

describe('executor: connections opened while runs wait for their instant', () => {
  let caller: HttpCaller;
  let server: Awaited<ReturnType<typeof socketServer>>;

  beforeEach(async () => {
    server = await socketServer();
    caller = createHttpCaller({ allowNetworks: ['127.0.0.0/8'] });
  });
  afterEach(async () => {
    await caller.close();
    await server.close();
  });

  it('opens one connection per run due at the same instant, and the calls use them', async () => {
    const due = soon();
    const went = [1, 2, 3].map((i) => caller.expect(`${server.url}/run/${i}`, due));
    await waitFor(() => server.sockets.length === 3, 'three warm connections', 2000);
    expect(server.requests).to.have.length(0);
    went.forEach((w) => w());
    const results = await Promise.all([1, 2, 3].map((i) => caller.call(get(`${server.url}/run/${i}`))));
    expect(results.map((r) => r.httpStatus)).to.deep.equal([200, 200, 200]);
    expect(server.sockets, 'no connection opened at the instant').to.have.length(3);
    expect(server.requests.every((s) => server.sockets.includes(s)), 'each request on a warm connection').to.equal(true);
    expect(new Set(server.requests).size, 'one request per connection').to.equal(3);
  });

  it('opens nothing when the origin already has enough connections', async () => {
    await Promise.all([1, 2].map((i) => caller.call(get(`${server.url}/first/${i}`))));
    const before = server.sockets.length;
    const due = soon();
    const went = [1, 2].map((i) => caller.expect(`${server.url}/next/${i}`, due));
    await new Promise((r) => setTimeout(r, 100));
    expect(server.sockets).to.have.length(before);
    went.forEach((w) => w());
  });

  it('counts runs per instant: runs due at different instants share connections', async () => {
    const first = soon();
    caller.expect(`${server.url}/a`, first);
    caller.expect(`${server.url}/b`, first + 1000);
    await new Promise((r) => setTimeout(r, 100));
    expect(server.sockets).to.have.length(1);
  });

  it('never connects where the egress guard refuses, and the call still says why', async () => {
    await caller.close();
    caller = createHttpCaller({ allowNetworks: [] });
    caller.expect(`${server.url}/private`, soon())();
    await new Promise((r) => setTimeout(r, 100));
    expect(server.sockets).to.have.length(0);
    const result = await caller.call(get(`${server.url}/private`));
    expect(result.httpStatus).to.equal(0);
    expect(result.error).to.match(/refused|not allowed/i);
  });

  it('closes a warm connection nobody used', async () => {
    await caller.close();
    caller = createHttpCaller({ allowNetworks: ['127.0.0.0/8'], warmIdleMs: 100 });
    caller.expect(`${server.url}/gone`, soon())();
    await waitFor(() => server.sockets.length === 1, 'a warm connection', 2000);
    await waitFor(() => server.sockets[0]!.destroyed, 'the warm connection closed', 2000);
  });
});
