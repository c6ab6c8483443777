import type { Readiness } from './readiness.ts';

/**
 * What every `start<Name>Service` (services/<name>/service.ts) resolves to, so that each main.ts,
 * embedded mode, the CLI and the tests start, reach and stop any service the same way. A starter
 * resolves once the service does its work (views caught up, servers listening, consumers
 * attached); from then on `readiness` says whether it still can.
 *
 * `Parts` are the service's inner pieces (a view, the planner, the dispatcher) that embedded
 * wiring and tests read; `Endpoint` names the servers it listens on.
 */
export type ServiceHandle<Parts extends object = object, Endpoint extends string = 'grpc'> = {
  /** host:port of each server it listens on, with the port actually bound (port 0 asked: the one picked). */
  readonly addresses: Readonly<Record<Endpoint, string>>;
  /** The conditions it declared, in the readiness it was given (a new one when given none). */
  readonly readiness: Readiness;
  /** Stops serving and consuming and releases what it opened; what it was given (store, bus) stays open. */
  stop(): Promise<void>;
} & Readonly<Parts>;

/** `host:port` as bound: the host asked for, with the port the server got (asked for 0: the one picked). */
export const boundAddress = (asked: string, port: number) => `${asked.slice(0, asked.lastIndexOf(':'))}:${port}`;

/** The port of a `host:port` address. */
export const portOf = (address: string) => Number(address.slice(address.lastIndexOf(':') + 1));
