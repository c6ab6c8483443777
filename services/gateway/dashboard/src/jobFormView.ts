import { ApiError, type Call } from './api.ts';
import { h, replace } from './dom.ts';
import { defaultValues, fieldOfMessage, fieldsFromOpenApi, maskedSecretLeft, paramsFromValues, secretsNotCopied, valuesFromRecord, type Field, type FormValues } from './fields.ts';
import { FORM_GROUPS, FORM_LAYOUT, labelOf } from './formLayout.ts';
import { openApiDocument, zoneList } from './forms.ts';
import type { JobRecord } from './format.ts';
import type { ViewContext } from './view.ts';
import { previewLines } from './preview.ts';
import { testResultView, type TestResult } from './testResult.ts';

/** The control of one field, its value set from the form's values. */
function control(f: Field, value: string | boolean, groups: Named[]): HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement {
  const attrs = { id: `field-${f.name}`, name: f.name, 'aria-describedby': `error-${f.name}` };
  switch (f.kind) {
    case 'bool':
      return h('input', { attrs: { ...attrs, type: 'checkbox' }, checked: value === true });
    case 'choice': {
      // The value is set once the options exist: set before, it would fall back to the first one.
      const select = h('select', { attrs }, ...(f.options ?? []).map((o) => h('option', { value: o }, o)));
      select.value = String(value);
      return select;
    }
    case 'group': {
      const select = h('select', { attrs }, h('option', { value: '' }, 'no group'), ...groups.map((g) => h('option', { value: String(g.id) }, `${g.name} (#${g.id})`)));
      select.value = String(value);
      return select;
    }
    case 'multiline':
      return h('textarea', { attrs: { ...attrs, rows: 4, maxlength: f.maxLength }, value: String(value) });
    case 'int':
    case 'optionalInt':
      return h('input', { attrs: { ...attrs, type: 'number', step: 1, min: f.min, max: f.max }, value: String(value) });
    case 'secret':
      return h('input', { attrs: { ...attrs, type: 'password', autocomplete: 'new-password', maxlength: f.maxLength }, value: String(value) });
    default:
      // The time zone searches the browser's list of IANA names as it is typed.
      return h('input', { attrs: { ...attrs, type: 'text', maxlength: f.maxLength, required: f.required, list: f.name === 'timezone' ? 'time-zones' : undefined, autocomplete: 'off' }, value: String(value) });
  }
}

interface Named {
  id: number;
  name: string;
}
interface Loaded {
  fields: Field[];
  groups: Named[];
  /** The account's channels, for the notifyChannels hint; empty when the notifier cannot say. */
  channels: (Named & { type: string })[];
  values: FormValues;
  original: FormValues | undefined;
  /** A clone: the secrets of the job it copies that the API does not show, to be typed again. */
  notCopied?: string[];
}

/** A new job's form; an edit's (`id`), from the job; a clone's (`cloneOf`), from the job it copies, saved as a new one. */
async function load(call: Call, id: number | undefined, cloneOf: number | undefined): Promise<Loaded> {
  const fields = fieldsFromOpenApi(await openApiDocument());
  const groups = await call<Named[]>('group_list');
  const channels = await call<Loaded['channels']>('channel_list').catch(() => []);
  const source = id ?? cloneOf;
  if (source === undefined) {
    const account = await call<{ timezone: string }>('account_get');
    return { fields, groups, channels, values: defaultValues(fields, account.timezone), original: undefined };
  }
  const job = await call<JobRecord>('cron_get', { id: source });
  const values = valuesFromRecord(fields, job);
  if (id !== undefined) return { fields, groups, channels, values, original: { ...values } };
  values.name = `${job.name || `cron job ${source}`} (copy)`;
  return { fields, groups, channels, values, original: undefined, notCopied: secretsNotCopied(job) };
}

/**
 * The channels chosen by name: a checkbox each, kept in step with the setting's own field (the
 * comma list of ids the API takes), which stays in the form for what is sent.
 */
function channelPicker(input: HTMLInputElement, channels: Loaded['channels']) {
  input.type = 'hidden';
  if (!channels.length) return h('p', { className: 'hint' }, 'The account has no channel yet (see Channels).');
  const chosen = () => new Set(input.value.split(',').map((v) => v.trim()).filter(Boolean));
  const boxes = channels.map((c) => {
    const box = h('input', { attrs: { type: 'checkbox', id: `channel-${c.id}`, value: String(c.id) }, checked: chosen().has(String(c.id)) });
    box.addEventListener('change', () => {
      input.value = boxes.filter((b) => b.checked).map((b) => b.value).join(',');
    });
    return box;
  });
  return h('fieldset', { className: 'channels', attrs: { id: 'notify-channels' } }, h('legend', { className: 'visually-hidden' }, 'Channels'), ...boxes.map((b, i) => h('span', { className: 'choice' }, b, h('label', { attrs: { for: b.id } }, `${channels[i]!.name || channels[i]!.type} (${channels[i]!.type})`))));
}

/** The line under a field: its description, and what the form knows that helps fill it. */
function hintOf(f: Field, { channels, original }: Pick<Loaded, 'channels' | 'original'>) {
  if (f.kind === 'secret' && original) return `${f.doc}; leave empty to keep the current one`;
  if (f.name === 'notifyChannels') return channels.length ? 'None ticked: every channel of the account.' : '';
  return f.doc;
}

/** Create (no id) or edit a job. The API's error goes next to the field its message names. */
export function jobFormView({ call, main, go }: ViewContext, id?: number, cloneOf?: number) {
  const status = h('p', { className: 'error', attrs: { role: 'alert', id: 'form-error' } });
  const title = id !== undefined ? `Edit cron job #${id}` : cloneOf !== undefined ? `Copy of cron job #${cloneOf}` : 'New cron job';
  replace(main, h('h1', {}, title), status, h('p', { className: 'hint' }, 'Loading…'));
  let stopped = false;
  load(call, id, cloneOf).then(
    (loaded) => {
      if (!stopped) draw(loaded);
    },
    (error: Error) => replace(status, `Cannot load the form: ${error.message}`),
  );

  function draw(loaded: Loaded) {
    const { fields, groups, values, original } = loaded;
    const controls = new Map<string, ReturnType<typeof control>>();
    const errors = new Map<string, HTMLElement>();
    const preview = h('div', { className: 'preview', attrs: { id: 'schedule-preview', 'aria-live': 'polite' } });
    const row = (f: Field) => {
      const input = control(f, values[f.name] ?? '', groups);
      controls.set(f.name, input);
      const error = h('span', { className: 'field-error', attrs: { id: `error-${f.name}`, 'data-error-for': f.name } });
      errors.set(f.name, error);
      const extra = f.name === 'filter' ? preview : f.name === 'notifyChannels' ? channelPicker(input as HTMLInputElement, loaded.channels) : f.name === 'timezone' ? zoneList() : null;
      return h('div', { className: `field field-${f.kind}` }, h('label', { attrs: { for: `field-${f.name}` } }, labelOf(f.name)), input, h('span', { className: 'hint' }, hintOf(f, loaded)), error, extra);
    };
    const section = (group: string) => {
      const inGroup = fields.filter((f) => FORM_LAYOUT[f.name]?.group === group);
      return inGroup.length ? h('fieldset', {}, h('legend', {}, group), ...inGroup.map(row)) : null;
    };
    const others = fields.filter((f) => !FORM_LAYOUT[f.name]);
    const current = (): FormValues => Object.fromEntries([...controls].map(([name, c]) => [name, c instanceof HTMLInputElement && c.type === 'checkbox' ? c.checked : c.value]));
    const updatePreview = () => {
      const v = current();
      const { text, notes, error } = previewLines(String(v.expression ?? ''), String(v.timezone ?? '') || 'UTC', String(v.filter ?? ''), id, Date.now());
      replace(
        preview,
        h('strong', {}, 'Preview'),
        h('span', { className: 'hint' }, ` (times in ${String(v.timezone ?? '') || 'UTC'})`),
        error ? h('p', { className: 'field-error' }, error) : h('ul', {}, ...text.map((t, i) => h('li', {}, t, notes[i] ? h('span', { className: 'dst-warning', attrs: { role: 'note' } }, ` Daylight saving: ${notes[i]}`) : null))),
      );
    };
    const submit = h('button', { attrs: { type: 'submit', id: 'save' } }, id === undefined ? 'Create job' : 'Save changes');
    const tester = h('button', { className: 'secondary', attrs: { type: 'button', id: 'test-call' }, on: { click: () => void test() } }, 'Test');
    const tested = h('section', { className: 'test-result', attrs: { id: 'test-result', 'aria-live': 'polite', 'aria-label': 'Test call' } });
    const form = h(
      'form',
      {
        className: 'job-form',
        attrs: { novalidate: true },
        on: {
          submit: (event) => {
            event.preventDefault();
            void save();
          },
          input: (event) => {
            const name = (event.target as HTMLInputElement).name;
            if (['expression', 'timezone', 'filter'].includes(name)) updatePreview();
          },
        },
      },
      ...FORM_GROUPS.map(section),
      others.length ? h('details', {}, h('summary', {}, 'More settings'), ...others.map(row)) : null,
      h('div', { className: 'toolbar' }, submit, tester, h('a', { attrs: { href: (id ?? cloneOf) === undefined ? '#/' : `#/jobs/${id ?? cloneOf}` } }, 'Cancel'), h('span', { className: 'hint' }, 'Test calls the URL once with these settings and saves nothing.')),
      tested,
    );
    const note = loaded.notCopied
      ? h('p', { className: 'notice-copy', attrs: { id: 'clone-note' } }, `Saved as a new job. ${loaded.notCopied.length ? `Not copied (the API never shows them), to type again: ${loaded.notCopied.join(', ')}.` : ''}`)
      : null;
    replace(main, h('h1', {}, title), note, status, form);
    updatePreview();

    /** The API's error at the field its message names, else at the top of the form. */
    function showError(error: unknown) {
      const message = error instanceof ApiError ? error.message : String(error);
      const field = fieldOfMessage(message, [...controls.keys()]);
      const where = field && errors.get(field);
      if (where) {
        replace(where, message);
        // A field under the closed "More settings" would hide its message: open it.
        where.closest('details')?.setAttribute('open', '');
        controls.get(field)?.focus();
      } else replace(status, message);
    }

    /** The parameters the form stands for (an edit: only what changed), or the error that stops them. */
    function formParams() {
      replace(status);
      for (const e of errors.values()) replace(e);
      // A clone holds the copied job's masked secrets as any changed value would: they are stopped the same way.
      const masked = maskedSecretLeft(current(), original ?? (cloneOf !== undefined ? {} : undefined));
      if (masked) throw new ApiError(3, masked.message);
      const params = paramsFromValues(fields, current(), original);
      return id === undefined ? params : { ...params, id };
    }

    async function save() {
      submit.disabled = true;
      try {
        const job = await call<JobRecord>(id === undefined ? 'cron_add' : 'cron_edit', formParams());
        go(`/jobs/${job.id}`);
      } catch (error) {
        showError(error);
      } finally {
        submit.disabled = false;
      }
    }

    /** cron_test: one call with the form's settings (an edit's stored secrets kept), its answer shown under the form. */
    async function test() {
      tester.disabled = true;
      replace(tested, h('p', { className: 'hint' }, 'Calling the URL…'));
      try {
        replace(tested, ...testResultView(await call<TestResult>('cron_test', formParams())));
      } catch (error) {
        replace(tested);
        showError(error);
      } finally {
        tester.disabled = false;
      }
    }
  }
  return () => {
    stopped = true;
  };
}
