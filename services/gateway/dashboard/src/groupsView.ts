import type { ApiError } from './api.ts';
import { h, link, replace } from './dom.ts';
import { formFields } from './forms.ts';
import type { ViewContext } from './view.ts';

export interface Group {
  id: number;
  name: string;
  jobCount: number;
  priority: number;
}

const HEADINGS = ['Name', 'Jobs', 'Actions'];
const cell = (i: number, ...children: (Node | string | null)[]) => h('td', { attrs: { 'data-label': HEADINGS[i] } }, ...children);
const jobsText = (n: number) => (n === 1 ? '1 job' : `${n} jobs`);

/**
 * The account's groups from one call (group_list, with each group's job count): add, rename,
 * delete, and a link to the job list showing a group's jobs. Moving jobs between groups is in the
 * job list's bulk actions and the job form.
 */
export function groupsView({ call, main }: ViewContext) {
  const message = h('p', { className: 'error', attrs: { role: 'alert', id: 'groups-error' } });
  const notice = h('p', { className: 'notice', attrs: { role: 'status', id: 'groups-notice' } });
  const body = h('tbody');
  let groups: Group[] = [];

  const addStatus = h('p', { className: 'error', attrs: { role: 'alert' } });
  const add = formFields('group-add', addStatus);
  const addButton = h('button', { attrs: { type: 'submit', id: 'group-add-save' } }, 'Add group');
  const addForm = h(
    'form',
    { className: 'area-form', attrs: { id: 'group-add', 'aria-labelledby': 'group-add-title', novalidate: true }, on: { submit: (e) => { e.preventDefault(); void addGroup(); } } },
    h('h2', { attrs: { id: 'group-add-title' } }, 'Add a group'),
    add.row('name', 'Name', h('input', { attrs: { type: 'text', maxlength: 255, autocomplete: 'off' } })),
    h('div', { className: 'toolbar' }, addButton),
    addStatus,
  );

  replace(
    main,
    h('h1', {}, 'Groups'),
    h('p', { className: 'hint' }, 'A job is in one group or none. Move jobs with "Select jobs" in the job list, or in a job\'s form.'),
    message,
    notice,
    h('table', { className: 'cards', attrs: { id: 'groups' } }, h('thead', {}, h('tr', {}, ...HEADINGS.map((t) => h('th', { attrs: { scope: 'col' } }, t)))), body),
    addForm,
  );

  function said(text: string) {
    replace(message);
    replace(notice, text);
  }

  function draw() {
    replace(body, ...groups.map(row));
    if (!groups.length) body.append(h('tr', {}, h('td', { attrs: { colspan: HEADINGS.length }, className: 'hint' }, 'No group yet.')));
  }

  function row(g: Group) {
    const tr = h('tr', { attrs: { 'data-group-id': g.id } });
    const show = () =>
      replace(
        tr,
        cell(0, h('strong', {}, g.name)),
        cell(1, g.jobCount ? link(`/?group=${g.id}`, `${jobsText(g.jobCount)}`, h('span', { className: 'visually-hidden' }, ` in ${g.name}`)) : 'no job'),
        cell(
          2,
          h('span', { className: 'toolbar' },
            h('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'rename', 'aria-label': `Rename ${g.name}` }, on: { click: () => rename() } }, 'Rename'),
            h('button', { className: 'danger', attrs: { type: 'button', 'data-action': 'delete', 'aria-label': `Delete ${g.name}` }, on: { click: () => void remove(g) } }, 'Delete'),
          ),
        ),
      );
    /** Back to the row as it was, the focus on its Rename button. */
    const cancel = () => {
      show();
      tr.querySelector<HTMLButtonElement>('[data-action="rename"]')?.focus();
    };
    const rename = () => {
      const status = h('p', { className: 'error', attrs: { role: 'alert' } });
      const f = formFields(`group-${g.id}`, status);
      const input = h('input', { attrs: { type: 'text', maxlength: 255, autocomplete: 'off' }, value: g.name });
      const form = h(
        'form',
        {
          className: 'area-form inline',
          attrs: { 'aria-label': `Rename ${g.name}`, novalidate: true },
          on: {
            keydown: (e) => {
              if (e.key === 'Escape') cancel();
            },
            submit: (e) => {
              e.preventDefault();
              f.clear();
              call<Group>('group_edit', { id: g.id, name: input.value }).then(
                (saved) => {
                  groups = groups.map((x) => (x.id === g.id ? saved : x));
                  draw();
                  said(`Renamed to ${saved.name}.`);
                  body.querySelector<HTMLButtonElement>(`tr[data-group-id="${g.id}"] [data-action="rename"]`)?.focus();
                },
                (error: unknown) => f.show(error),
              );
            },
          },
        },
        f.row('name', 'Name', input),
        h('span', { className: 'toolbar' }, h('button', { attrs: { type: 'submit' } }, 'Save'), h('button', { className: 'secondary', attrs: { type: 'button' }, on: { click: () => cancel() } }, 'Cancel')),
        status,
      );
      replace(tr, h('td', { attrs: { colspan: HEADINGS.length } }, form));
      input.focus();
      input.select();
    };
    show();
    return tr;
  }

  async function remove(g: Group) {
    const jobs = g.jobCount ? ` Its ${jobsText(g.jobCount)} stay, in no group.` : '';
    if (!window.confirm(`Delete the group "${g.name}"?${jobs}`)) return;
    try {
      await call('group_delete', { id: g.id });
      groups = groups.filter((x) => x.id !== g.id);
      draw();
      // Its row (and the focused button) is gone: the focus goes to the page's content.
      main.focus();
      said(`Group ${g.name} deleted.${g.jobCount ? ` Its ${jobsText(g.jobCount)} are now in no group.` : ''}`);
    } catch (error) {
      replace(message, (error as ApiError).message);
    }
  }

  async function addGroup() {
    add.clear();
    addButton.disabled = true;
    try {
      const input = add.controls.get('name')!;
      const g = await call<Group>('group_add', { name: input.value });
      groups = [...groups, g];
      input.value = '';
      draw();
      said(`Group ${g.name} added.`);
    } catch (error) {
      add.show(error);
    } finally {
      addButton.disabled = false;
    }
  }

  call<Group[]>('group_list').then(
    (list) => {
      groups = list;
      draw();
    },
    (error: ApiError) => replace(message, `Could not load the groups: ${error.message}`),
  );
  return () => {};
}
