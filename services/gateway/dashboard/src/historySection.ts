import type { ApiError, Call } from './api.ts';
import { h, replace } from './dom.ts';
import { formatTime } from './format.ts';
import { changeText, versionSummary, type VersionEntry } from './versions.ts';

/** Versions shown: the newest ones, in one call. */
const SHOWN = 100;

/**
 * A job's versions, in a <details> closed at first: cron_history is called only when the owner
 * opens it, so a job's page costs its three calls until then, and again after a restore. Every
 * version but the current one can be restored (cron_rollback, after a confirmation): the restore
 * is a new version, so nothing is lost.
 */
export function historySection(call: Call, id: number, zone: string, restored: () => Promise<void>) {
  const list = h('ul', { className: 'versions', attrs: { id: 'versions' } });
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'history-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'history-notice' } });
  const hint = h('p', { className: 'hint' }, `Each change of the job's settings is a version. Times in ${zone}; secrets are never shown, only that they changed.`);
  const details = h('details', { attrs: { id: 'history' }, on: { toggle: () => void (details.open && load()) } }, h('summary', {}, 'History'), hint, message, notice, list);

  async function load() {
    replace(message);
    try {
      draw(await call<VersionEntry[]>('cron_history', { id, versions: true, limit: SHOWN }));
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  async function restore(version: number) {
    if (!window.confirm(`Restore the settings of version ${version} of cron job ${id}? It becomes a new version; the job's state (paused, disabled) stays as it is.`)) return;
    replace(message);
    replace(notice);
    try {
      await call('cron_rollback', { id, version });
      replace(notice, `The settings of version ${version} are restored.`);
      await restored();
      await load();
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  function draw(versions: VersionEntry[]) {
    const latest = versions[0]?.version;
    replace(
      list,
      ...versions.map((v) =>
        h(
          'li',
          { attrs: { 'data-version': v.version } },
          h('p', { className: 'version-head' }, h('strong', {}, `Version ${v.version}`), ` · ${formatTime(v.time, zone)} · ${versionSummary(v)}`, v.version === latest ? h('span', { className: 'hint' }, ' (current)') : null),
          v.type === 'JobCreated' ? null : h('ul', { className: 'changes' }, ...v.changes.map((c) => h('li', {}, changeText(c)))),
          v.version === latest
            ? null
            : h('button', { className: 'secondary', attrs: { type: 'button', id: `restore-${v.version}` }, on: { click: () => void restore(v.version) } }, 'Restore this version'),
        ),
      ),
    );
    if (versions.length === SHOWN) list.append(h('li', { className: 'hint' }, `The newest ${SHOWN} versions; cron_history has them all.`));
  }

  return details;
}
