import { loadConfigOrExit } from '../../shared/config.ts';
import { createLogger } from '../../shared/log.ts';
import { describeStore, migrateStoreOrExit } from '../../shared/openStore.ts';
import { onShutdown } from '../../shared/runMain.ts';
import { startEmbedded } from './system.ts';

const config = loadConfigOrExit();
const log = createLogger('tock', { mode: 'embedded' }, config.LOG_LEVEL);
await migrateStoreOrExit(config, log);
const system = await startEmbedded({ config, log });
const local = (address: string) => address.replace(/^0\.0\.0\.0:/, '127.0.0.1:');
process.stdout.write(`Tock is running: http://${local(system.addresses.http)}/api/v1/ (event store: ${describeStore(config)})\n`);
process.stdout.write(`Metrics: http://${local(system.addresses.ops)}/metrics (operations port, OPS_HOST and OPS_PORT)\n`);
onShutdown(log, () => system.stop());
