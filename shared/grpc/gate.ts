import type { GenServiceMethods } from '@bufbuild/protobuf/codegenv2';
import { AppError } from '../errors.ts';
import type { ServiceImpl } from './bridge.ts';

/**
 * Every method of `impl` answers UNAVAILABLE at once while `closedBecause()` returns a reason (a
 * read model rebuilding or resubscribing), instead of answering from a partial view or waiting
 * until the caller's deadline. Callers may retry; the health service says when to.
 */
export function gated<S extends GenServiceMethods>(impl: ServiceImpl<S>, closedBecause: () => string | null): ServiceImpl<S> {
  const out: Record<string, (request: unknown) => Promise<unknown>> = {};
  for (const [name, fn] of Object.entries(impl as Record<string, (request: unknown) => Promise<unknown>>)) {
    out[name] = (request) => {
      const reason = closedBecause();
      if (reason !== null) return Promise.reject(new AppError('UNAVAILABLE', `${reason}; try again shortly`));
      return fn(request);
    };
  }
  return out as ServiceImpl<S>;
}
