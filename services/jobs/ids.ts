// Id allocation is shared with the notifier (channel ids): it lives in shared/eventStore.
export * from '../../shared/eventStore/ids.ts';
