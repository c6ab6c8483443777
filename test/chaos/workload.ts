/**
 * The chaos run's client: jobs every second on the recording target, and a stream of API edits
 * (URL and schedule edits, pause and resume, delete and add). Every operation is recorded with
 * when it was sent and answered; one whose answer was lost is read back until the API answers.
 */
import { spawn } from 'node:child_process';
import type { Envelope } from '../support/api.ts';
import type { Arrival, JobState, Op, OpKind } from './history.ts';
import { ABSENT } from './history.ts';
import { sleep } from '../support/waitFor.ts';

const SCHEDULES = ['* * * * * *', '*/2 * * * * *', '*/3 * * * * *'];

/** The recording target (targetProcess.ts) in its own process. */
export async function startChaosTarget() {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/chaos/targetProcess.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    async arrivals(): Promise<Arrival[]> {
      const text = await (await fetch(`${url}/__received`)).text();
      return text ? text.split('\n').map((line) => JSON.parse(line)) : [];
    },
    stop: () => child.kill('SIGTERM'),
  };
}

type Call = (fn: string, params?: Record<string, unknown>) => Promise<Envelope & { http: number }>;

/** An API client that never throws: a lost answer is an error envelope with code -1. */
export function chaosApi(baseUrl: string, token: string): Call {
  return async (fn, params = {}) => {
    try {
      const response = await fetch(`${baseUrl}/api/v1/${fn}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(params),
        signal: AbortSignal.timeout(15_000),
      });
      return { http: response.status, ...((await response.json()) as Envelope) };
    } catch (error) {
      return { http: 0, status: 'error', code: -1, message: (error as Error).message };
    }
  };
}

/** The path and state of a job record as the API answers it. */
export function stateOf(record: { url: string; expression: string; status: number }): JobState {
  return { exists: true, path: new URL(record.url).pathname, expression: record.expression, paused: record.status === 5 };
}

export function createEditor(api: Call, targetUrl: string, random: () => number, log: (line: string) => void) {
  const ops: Op[] = [];
  const jobs = new Map<string, { id?: number; state: JobState; version: number }>();
  let keys = 0;
  const urlOf = (key: string, version: number, flaky = false) => `${targetUrl}/c/${key}${flaky ? '/flaky' : ''}/v${version}?at=__timestamp_ms__`;

  /** Reads a job back until the API answers: what an unanswered operation did. */
  async function readBack(key: string): Promise<{ state: JobState; id?: number; at: number }> {
    for (;;) {
      const id = jobs.get(key)?.id;
      if (id !== undefined) {
        const got = await api('cron_get', { id });
        if (got.status === 'success') return { state: stateOf(got.data), id, at: Date.now() };
        if (got.code === 5) return { state: ABSENT, id, at: Date.now() };
      } else {
        const listed = await api('cron_list', { limit: 1000 });
        if (listed.status === 'success') {
          const found = (listed.data as any[]).find((j) => new URL(j.url).pathname.split('/')[2] === key);
          return found ? { state: stateOf(found), id: found.id, at: Date.now() } : { state: ABSENT, at: Date.now() };
        }
      }
      await sleep(1000);
    }
  }

  async function apply(key: string, kind: OpKind, fn: string, params: Record<string, unknown>, after: JobState) {
    const sendMs = Date.now();
    const answer = await api(fn, params);
    const job = jobs.get(key)!;
    if (answer.status === 'success') {
      if (kind === 'add') job.id = answer.data.id;
      const ackMs = Date.now();
      ops.push({ key, kind, sendMs, ackMs, acknowledged: true, after, jobId: job.id });
      job.state = after;
      return;
    }
    // Unknown outcome: wait, then read what it did (an append may land after the answer was lost).
    await sleep(3000);
    const read = await readBack(key);
    if (read.id !== undefined) job.id = read.id;
    ops.push({ key, kind, sendMs, ackMs: read.at, acknowledged: false, after: read.state, jobId: job.id });
    job.state = read.state;
    if (read.state.exists) job.version = Number(read.state.path.split('/v').at(-1));
    log(`${kind} ${key} not acknowledged (${answer.http} ${answer.message}); read back: ${JSON.stringify(read.state)}`);
  }

  const add = (flaky = false, prefix = 'e') => {
    const key = `${prefix}${keys++}`;
    jobs.set(key, { state: ABSENT, version: 0 });
    const url = urlOf(key, 0, flaky);
    return apply(key, 'add', 'cron_add', { url, expression: SCHEDULES[0], name: key }, { exists: true, path: new URL(url).pathname, expression: SCHEDULES[0]!, paused: false });
  };

  /** One random operation on the editable jobs. */
  async function step() {
    const live = [...jobs.entries()].filter(([k, j]) => k.startsWith('e') && j.state.exists);
    const roll = random();
    if (live.length < 3 || (roll < 0.12 && live.length < 8)) return add();
    const [key, job] = live[Math.floor(random() * live.length)]!;
    const { state } = job;
    if (roll < 0.24) return apply(key, 'delete', 'cron_delete', { id: job.id }, ABSENT);
    if (roll < 0.5) {
      const version = job.version + 1;
      job.version = version;
      const url = urlOf(key, version);
      return apply(key, 'url', 'cron_edit', { id: job.id, url }, { ...state, path: new URL(url).pathname });
    }
    if (roll < 0.75) {
      const expression = SCHEDULES.filter((e) => e !== state.expression)[Math.floor(random() * 2)]!;
      return apply(key, 'schedule', 'cron_edit', { id: job.id, expression }, { ...state, expression });
    }
    return state.paused ? apply(key, 'resume', 'cron_enable', { id: job.id }, { ...state, paused: false }) : apply(key, 'pause', 'cron_pause', { id: job.id }, { ...state, paused: true });
  }

  return {
    ops,
    jobs,
    /** Steady jobs (never edited), one flaky job (fails on odd seconds: notifications), editable ones. */
    async setUp(steady: number, editable: number) {
      for (let i = 0; i < steady; i++) {
        const key = `s${i}`;
        jobs.set(key, { state: ABSENT, version: 0 });
        const url = urlOf(key, 0);
        await apply(key, 'add', 'cron_add', { url, expression: SCHEDULES[0], name: key }, { exists: true, path: new URL(url).pathname, expression: SCHEDULES[0]!, paused: false });
      }
      await add(true, 'f');
      for (let i = 0; i < editable; i++) await add();
    },
    /** Edits until `until`, one operation every 0.5 to 2.5 s. */
    async run(until: () => boolean) {
      while (!until()) {
        await step();
        await sleep(500 + random() * 2000);
      }
    },
  };
}
