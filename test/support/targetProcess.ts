import { spawn } from 'node:child_process';
import { Agent, request } from 'undici';

export interface Arrival {
  url: string;
  at: number;
  scheduled: string;
  runId: string;
  /** Tock's default User-Agent carries the caller's public URL: a test can name each executor by it. */
  userAgent?: string;
}

/** Starts test/support/targetServer.ts as a child process; `arrivals()` fetches what it recorded. */
export async function startTargetProcess() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/targetServer.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c) => {
      out += c;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`target exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    /**
     * A fresh process answers its first few thousand requests with cold code: send them first, so
     * what a test measures is the caller's lateness, not the target's warm-up.
     */
    async warmUp(concurrency = 1000, rounds = 5) {
      const agent = new Agent({ connections: concurrency });
      for (let k = 0; k < rounds; k++) {
        await Promise.all(Array.from({ length: concurrency }, (_, i) => request(`${url}/warm/${i}`, { dispatcher: agent }).then((r) => r.body.dump())));
      }
      await agent.close();
    },
    async arrivals(): Promise<Arrival[]> {
      const text = await (await fetch(`${url}/__received`)).text();
      return text ? text.split('\n').map((line) => JSON.parse(line)) : [];
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
