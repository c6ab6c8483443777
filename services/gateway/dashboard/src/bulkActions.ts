import type { ApiError, Call } from './api.ts';
import { h, replace } from './dom.ts';
import type { JobWithHealth } from './health.ts';

/** Pause lengths offered (cron_batch_pause's `for`), besides "until resumed". */
const PAUSES = ['1 hour', '6 hours', '1 day', '1 week'];

export interface BulkOptions {
  call: Call;
  /** The jobs the list shows now (filters applied), in its order. */
  shown(): JobWithHealth[];
  /** After an action: the records it answered, and the ids it deleted, for the list to show at once. */
  done(records: JobWithHealth[], deleted: number[]): void;
  /** The rows' check boxes and the count follow the selection. */
  redraw(): void;
}

/**
 * Acting on several jobs of the list at once: a selection mode (off by default, so a row stays one
 * Tab stop) with a check box per row, and enable, disable, pause, move to a group and delete for
 * the selected rows that are shown. Each action is one call of a batch function, whatever the
 * number of jobs: all of them or, when one is refused, none.
 */
export function bulkActions(o: BulkOptions) {
  const selected = new Set<number>();
  let selecting = false;
  let groupsLoaded = false;
  const targets = () => o.shown().filter((j) => selected.has(j.id));

  const count = h('span', { attrs: { id: 'bulk-count', role: 'status' } });
  const error = h('p', { className: 'error', attrs: { role: 'alert', id: 'bulk-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'bulk-notice' } });
  const all = h('input', {
    attrs: { type: 'checkbox', id: 'bulk-all', 'aria-label': 'Select every job shown' },
    on: {
      change: () => {
        for (const j of o.shown()) if (all.checked) selected.add(j.id);
        else selected.delete(j.id);
        o.redraw();
      },
    },
  });
  const pauseFor = h('select', { attrs: { id: 'bulk-pause-for', 'aria-label': 'Pause for' } }, h('option', { value: '' }, 'until resumed'), ...PAUSES.map((p) => h('option', { value: p }, `for ${p}`)));
  const group = h('select', { attrs: { id: 'bulk-group', 'aria-label': 'Group to move to' } }, h('option', { value: '0' }, 'no group'));
  const button = (label: string, id: string, onClick: () => void, className = 'secondary') => h('button', { className, attrs: { type: 'button', id }, on: { click: onClick } }, label);
  const buttons = [
    button('Enable', 'bulk-enable', () => void act('cron_batch_enable', {}, 'enabled')),
    button('Disable', 'bulk-disable', () => void act('cron_batch_disable', {}, 'disabled')),
    button('Pause', 'bulk-pause', () => void act('cron_batch_pause', pauseFor.value ? { for: pauseFor.value } : {}, pauseFor.value ? `paused for ${pauseFor.value}` : 'paused')),
    button('Move', 'bulk-move', () => void act('cron_batch_edit', { group: group.value }, group.value === '0' ? 'taken out of their group' : `moved to ${group.selectedOptions[0]?.textContent ?? 'the group'}`)),
    button('Delete', 'bulk-delete', () => void act('cron_batch_delete', {}, 'deleted', true), 'danger'),
  ];
  const [enable, disable, pause, move, remove] = buttons;
  const bar = h(
    'div',
    { className: 'bulk', attrs: { id: 'bulk-bar', role: 'group', 'aria-label': 'Act on the selected jobs', hidden: true } },
    h('div', { className: 'toolbar' }, count, enable, disable, h('span', { className: 'pause' }, pause, pauseFor), h('span', { className: 'pause' }, move, group), remove),
    error,
    notice,
  );
  const toggle = h('button', { className: 'secondary', attrs: { type: 'button', id: 'bulk-toggle', 'aria-pressed': 'false', 'aria-controls': 'bulk-bar' }, on: { click: () => void setSelecting(!selecting) } }, 'Select jobs');

  /** The account's groups, asked once when selecting starts (a group may have no job yet). */
  async function loadGroups() {
    if (groupsLoaded) return;
    try {
      const groups = await o.call<{ id: number; name: string }[]>('group_list');
      replace(group, h('option', { value: '0' }, 'no group'), ...groups.map((g) => h('option', { value: String(g.id) }, g.name)));
      groupsLoaded = true;
    } catch (e) {
      replace(error, `Could not load the groups: ${(e as ApiError).message}`);
    }
  }

  async function setSelecting(on: boolean) {
    selecting = on;
    bar.hidden = !on;
    toggle.setAttribute('aria-pressed', String(on));
    replace(toggle, on ? 'Done selecting' : 'Select jobs');
    if (!on) selected.clear();
    o.redraw();
    if (on) await loadGroups();
  }

  async function act(fn: string, params: Record<string, string>, done: string, confirmFirst = false) {
    replace(error);
    replace(notice);
    const jobs = targets();
    if (!jobs.length) {
      replace(error, 'Select one or more jobs first.');
      return;
    }
    const what = jobs.length === 1 ? '1 job' : `${jobs.length} jobs`;
    if (confirmFirst && !window.confirm(`Delete ${what} (${jobs.map((j) => j.name || `#${j.id}`).join(', ')})? This cannot be undone.`)) return;
    const ids = jobs.map((j) => j.id);
    for (const b of buttons) b.disabled = true;
    try {
      const records = await o.call<JobWithHealth[]>(fn, { id: ids.join(','), ...params });
      const deleted = fn === 'cron_batch_delete' ? ids : [];
      for (const id of deleted) selected.delete(id);
      o.done(fn === 'cron_batch_delete' ? [] : records, deleted);
      replace(notice, `${what} ${done}.`);
    } catch (e) {
      replace(error, (e as ApiError).message);
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  }

  return {
    toggle,
    bar,
    all,
    get selecting() {
      return selecting;
    },
    /** Fills a row's select cell: a check box while selecting (made once, then only its state follows), nothing otherwise. */
    fill(cell: HTMLElement, j: JobWithHealth) {
      if (!selecting) {
        if (cell.firstChild) cell.replaceChildren();
        return;
      }
      let box = cell.firstChild as HTMLInputElement | null;
      if (!box) {
        box = h('input', { attrs: { type: 'checkbox', 'data-select': j.id, 'aria-label': `Select ${j.name || `cron job ${j.id}`}` } });
        box.addEventListener('change', () => {
          if (box!.checked) selected.add(j.id);
          else selected.delete(j.id);
          update();
        });
        cell.append(box);
      }
      box.checked = selected.has(j.id);
    },
    update,
  };

  /** The count and the select-all box, after the rows were drawn. */
  function update() {
    const shown = o.shown();
    const n = targets().length;
    replace(count, `${n} selected`);
    all.checked = shown.length > 0 && n === shown.length;
    all.indeterminate = n > 0 && n < shown.length;
  }
}
