/**
 * Failure notifications, the pure part: which executions call for a notification, how an
 * account's notifications are merged, delivered and retried, what a channel is, and what each
 * kind of channel receives. No I/O here; services/notifier wires it to the store, bus and network.
 */
export * from './trigger.ts';
export * from './rules.ts';
export * from './followUps.ts';
export * from './batch.ts';
export * from './delivery.ts';
export * from './channel.ts';
export * from './messages.ts';
export * from './hostGroups.ts';
export * from './failureRate.ts';
export * from './actionLinks.ts';
export * from './skipped.ts';
