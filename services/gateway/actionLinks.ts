import type Router from '@koa/router';
import type Koa from 'koa';
import { isAppError } from '../../shared/errors.ts';
import { ExecutionOutcome } from '../../shared/gen/tock/v1/events_pb.ts';
import { JobAction, type CronJob } from '../../shared/gen/tock/v1/jobs_pb.ts';
import type { ActionLinkReply } from '../../shared/gen/tock/v1/notifier_pb.ts';
import type { Logger } from '../../shared/log.ts';
import { ACTION_PAGE_HEADERS, confirmForm, escapeHtml, iso, page } from './actionHtml.ts';
import { parseBody, readBody } from './body.ts';
import type { Clients } from './functions.ts';

type Action = 'pause1h' | 'run' | 'logs' | 'silence';

/** What each acting link says before it acts, and its button. */
const ASK: Record<Exclude<Action, 'logs'>, { title: string; what: string; button: string }> = {
  pause1h: { title: 'Pause for 1 hour', what: 'will be paused for one hour: no run until then, then it runs on its schedule again.', button: 'Pause for 1 hour' },
  run: { title: 'Run now', what: 'will be run once, now, as cron_run does.', button: 'Run now' },
  silence: { title: 'Silence until it recovers', what: "will notify no one until its next successful run (its runs go on).", button: 'Silence notifications' },
};

/** A link that is not valid, in as few words as tell the reader what to do; nothing about why a forged one failed. */
const REFUSED: Record<string, { status: number; title: string; text: string }> = {
  used: { status: 410, title: 'Link already used', text: 'This link has done its action once and does nothing more. Use the dashboard or the API, or a link of a newer notification.' },
  expired: { status: 410, title: 'Link expired', text: 'The links of a notification work for 24 hours. Use the dashboard or the API, or a link of a newer notification.' },
  invalid: { status: 404, title: 'Link not valid', text: 'This link is not a valid Tock link. Copy it whole from the notification, or use the dashboard or the API.' },
  gone: { status: 404, title: 'Job not found', text: 'The cron job this link names no longer exists.' },
};

const jobName = (job: CronJob) => `${job.name ? `"${job.name}" ` : ''}(cron job #${job.id})`;

/**
 * The pages of notifications' action links, served without an API token: the token of the link
 * is the capability, and only the notifier (which holds the key) can tell a good one. A GET shows
 * what the link would do and changes nothing; the page's POST spends the link (the notifier
 * records it, once for all replicas) and then acts through the same services as the API.
 * A logs link only shows the job's recent results, without their output, until it expires.
 */
export function actionLinkRoutes(router: Router, clients: Clients, open: Koa.Middleware, log: Logger) {
  const answer = (ctx: Koa.Context, status: number, title: string, body: string) => {
    ctx.set(ACTION_PAGE_HEADERS);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = page(title, body);
  };
  const refuse = (ctx: Koa.Context, state: string) => {
    const r = REFUSED[state] ?? REFUSED.invalid!;
    answer(ctx, r.status, r.title, `<p>${escapeHtml(r.text)}</p>`);
  };
  const failed = (ctx: Koa.Context, error: unknown, where: string) => {
    // A 4xx of ours is written for the reader; anything else stays in the log.
    if (isAppError(error) && error.httpStatus < 500) return answer(ctx, error.httpStatus, 'Not done', `<p>${escapeHtml(error.message)}</p>`);
    log.error('action link failed', { where, error });
    answer(ctx, 503, 'Not done', '<p>Tock could not do this right now. Try again in a moment, or use the dashboard.</p>');
  };

  /** The link's state and its job, or undefined when a page was answered. */
  const look = async (ctx: Koa.Context, token: string): Promise<{ link: ActionLinkReply; job: CronJob } | undefined> => {
    const notifier = clients.notifier;
    if (!notifier || !token) return void refuse(ctx, 'invalid');
    const link = await notifier.actionLinkCheck({ token });
    if (link.state !== 'valid') return void refuse(ctx, link.state);
    const job = await clients.jobs.getJob({ accountId: link.accountId, id: link.jobId }).catch((error: unknown) => {
      if (isAppError(error) && error.kind === 'NOT_FOUND') return undefined;
      throw error;
    });
    if (!job || job.deleted) return void refuse(ctx, 'gone');
    return { link, job };
  };

  router.get('/a/:token', open, async (ctx) => {
    const token = String(ctx.params.token);
    try {
      const found = await look(ctx, token);
      if (!found) return;
      const { link, job } = found;
      const until = `<p class="note">This link works until ${iso(Number(link.expiresAt))}.</p>`;
      log.info('action link shown', { action: link.action, jobId: job.id, accountId: link.accountId, ip: ctx.ip });
      if (link.action === 'logs') return answer(ctx, 200, `Recent runs of ${jobName(job)}`, (await runsTable(clients, link)) + until);
      const ask = ASK[link.action as Exclude<Action, 'logs'>];
      answer(ctx, 200, ask.title, `<p>Cron job ${escapeHtml(jobName(job))} ${escapeHtml(ask.what)}</p><p>Nothing happens until you press the button.</p>${confirmForm(token, ask.button)}${until}`);
    } catch (error) {
      failed(ctx, error, 'show');
    }
  });

  router.post(['/a', '/a/'], open, async (ctx) => {
    try {
      const fields = parseBody(await readBody(ctx.req), ctx.get('content-type') || undefined).fields;
      const token = typeof fields.token === 'string' ? fields.token : '';
      const found = await look(ctx, token);
      if (!found) return;
      const { job } = found;
      // A logs link never acts: its page is the answer.
      if (found.link.action === 'logs') return ctx.redirect(`./${encodeURIComponent(token)}`);
      const link = await clients.notifier!.actionLinkUse({ token });
      if (link.state !== 'valid') return refuse(ctx, link.state);
      const { accountId, jobId } = link;
      log.info('action link used', { action: link.action, jobId, accountId, ip: ctx.ip });
      let done: string;
      if (link.action === 'pause1h') {
        const [paused] = (await clients.jobs.applyAction({ accountId, ids: [jobId], action: JobAction.PAUSE, pauseFor: '1 hour' })).jobs;
        done = `Paused until ${iso(Number(paused?.pausedUntil ?? 0n) * 1000)}. It runs on its schedule again after that; cron_enable resumes it sooner.`;
      } else if (link.action === 'run') {
        const { at } = await clients.jobs.runJob({ accountId, id: jobId });
        done = `A run was asked for ${iso(Number(at) * 1000)}. Its result will be in the job's logs.`;
      } else {
        await clients.notifier!.jobSnooze({ accountId, id: jobId });
        done = 'Notifications are silenced until its next successful run. cron_unsnooze ends that sooner.';
      }
      answer(ctx, 200, 'Done', `<p>Cron job ${escapeHtml(jobName(job))}: ${escapeHtml(done)}</p><p class="note">This link is now used and does nothing more.</p>`);
    } catch (error) {
      failed(ctx, error, 'act');
    }
  });
}

/** The job's last 20 results: when, outcome, HTTP status, duration and error, never the output. */
async function runsTable(clients: Clients, link: ActionLinkReply): Promise<string> {
  if (!clients.logs) return '<p>The logs service is not configured.</p>';
  const { entries } = await clients.logs.logs({ accountId: link.accountId, id: link.jobId, failuresOnly: false, keyword: '', page: 1, limit: 20 });
  if (!entries.length) return '<p>No runs recorded yet.</p>';
  const rows = entries.map(({ execution: e }) => {
    const failed = e?.outcome === ExecutionOutcome.FAILED;
    const cells = [iso(Number(e?.time ?? 0n) * 1000), failed ? 'failed' : e?.outcome === ExecutionOutcome.SKIPPED ? 'skipped' : 'ok', e?.httpStatus ? String(e.httpStatus) : '-', `${(e?.executionTime ?? 0).toFixed(2)} s`, (e?.error ?? '').slice(0, 200)];
    return `<tr${failed ? ' class="failed"' : ''}>${cells.map((c) => `<td>${escapeHtml(c)}</td>`).join('')}</tr>`;
  });
  return `<table><tr><th>When</th><th>Result</th><th>HTTP</th><th>Time</th><th>Error</th></tr>${rows.join('')}</table>`;
}
