// Contender "naive loop": one croner timer per job (`* * * * * *`), each calling undici directly
// and recording nothing: the simplest scheduler a user could write instead of running Tock.
import { Cron } from 'croner';
import { Agent, request } from 'undici';

const [sink, n] = [process.env.SINK!, Number(process.env.N)];
const agent = new Agent({ connections: 256, keepAliveTimeout: 60_000 });
const timers: Cron[] = [];
for (let i = 0; i < n; i++) {
  timers.push(
    // croner fires at or after the due second (never before it), so the second it is in is the one due.
    new Cron('* * * * * *', () => {
      request(`${sink}/naive/${i}?s=${Math.floor(Date.now() / 1000) * 1000}`, { dispatcher: agent }).then((r) => r.body.dump(), () => undefined);
    }),
  );
}
process.stdout.write('ready\n');
process.on('SIGTERM', () => process.exit(0));
