import type { Logger } from './log.ts';

/** Stops the service cleanly on SIGINT/SIGTERM; logs (never swallows) what would otherwise crash silently. */
export function onShutdown(log: Logger, stop: () => Promise<void>) {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    try {
      await stop();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('unhandledRejection', (error) => log.error('unhandled rejection', { error }));
}
