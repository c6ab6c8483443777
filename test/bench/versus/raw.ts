// Contender "raw undici": at every whole second, N GETs at once on warm connections, recording
// nothing. The yardstick of what this machine can do: what a scheduler adds is measured against it.
import { Agent, request } from 'undici';

const [sink, n] = [process.env.SINK!, Number(process.env.N)];
const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
await Promise.all(Array.from({ length: 256 }, (_, i) => request(`${sink}/warm/${i}`, { dispatcher: agent }).then((r) => r.body.dump())));

function fire() {
  // Timers fire at or after their instant: the second it is in is the one due.
  const s = Math.floor(Date.now() / 1000) * 1000;
  for (let i = 0; i < n; i++) request(`${sink}/raw/${i}?s=${s}`, { dispatcher: agent }).then((r) => r.body.dump(), () => undefined);
  setTimeout(fire, 1000 - (Date.now() % 1000));
}
setTimeout(fire, 1000 - (Date.now() % 1000));
process.stdout.write('ready\n');
process.on('SIGTERM', () => process.exit(0));
