// The command path is shared with the notifier: it lives in shared/eventStore.
export * from '../../shared/eventStore/handleCommand.ts';
