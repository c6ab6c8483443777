/**
 * The decider pattern's shapes: decide is pure, evolve folds, and only
 * shared/eventStore/handleCommand.ts touches a store. Pure (no imports), so the domain modules
 * that define deciders (shared/job, shared/notify, the jobs service's accounts and groups) depend
 * on no store.
 */

export interface DomainEvent {
  type: string;
  data: object;
}

export interface Decider<C, S, E extends DomainEvent> {
  initialState(): S;
  evolve(state: S, event: E): S;
  decide(command: C, state: S, now: number): E[];
}
