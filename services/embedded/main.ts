import { loadConfigOrExit } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { describeStore, migrateStoreOrExit } from '../../shared/openStore.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startEmbedded } from './system.ts';

const config = loadConfigOrExit();
const log = createLogger('tock', { mode: 'embedded' }, config.LOG_LEVEL);
await migrateStoreOrExit(config, log);
const system = await startEmbedded({ config, log });
process.stdout.write(`Tock is running: http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${system.port}/api/v1/ (event store: ${describeStore(config)})\n`);
onShutdown(log, () => system.stop());
