/**
 * The subject only the notifier publishes on (see deploy/k8s/base/nats.conf). A module of its own
 * so that `npm run depcheck` keeps every other service from publishing notifications.
 */

/** A decided notification, stream NOTIFICATIONS; payload tock.v1.Notification. */
export const notificationSubject = (accountId: number, kind: string) => `tock.notifications.${accountId}.${kind}`;
