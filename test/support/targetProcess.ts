import { spawn } from 'node:child_process';

export interface Arrival {
  url: string;
  at: number;
  scheduled: string;
  runId: string;
}

/** Starts test/support/targetServer.ts as a child process; `arrivals()` fetches what it recorded. */
export async function startTargetProcess() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/targetServer.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c) => {
      out += c;
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`target exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
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
