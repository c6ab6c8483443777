import { ApiError } from './api.ts';
import { h, replace } from './dom.ts';
import { fieldOfMessage } from './fields.ts';

let openApi: Promise<unknown> | undefined;
/** The OpenAPI document (public, the same for every account, no API call): fetched once per page load. */
export function openApiDocument() {
  openApi ??= fetch('/api/v1/openapi.json').then((r) => (r.ok ? r.json() : Promise.reject(new Error(`openapi.json: HTTP ${r.status}`))));
  return openApi;
}

export interface ParamDoc {
  description?: string;
  enum?: string[];
  minimum?: number;
  maximum?: number;
}

/** A function's documented parameters (its body schema in the OpenAPI document), by name. */
export async function paramsOf(fn: string): Promise<Record<string, ParamDoc>> {
  const doc = (await openApiDocument()) as { paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, ParamDoc> } }> } } }> };
  const properties = doc.paths?.[`/api/v1/${fn}`]?.post?.requestBody?.content?.['application/json']?.schema?.properties;
  if (!properties) throw new Error(`the OpenAPI document does not describe ${fn}`);
  return properties;
}

/** The browser's IANA time zones, for a time zone field's search (one list per page). */
export function zoneList() {
  if (document.getElementById('time-zones')) return null;
  return h('datalist', { attrs: { id: 'time-zones' } }, ...Intl.supportedValuesOf('timeZone').map((z) => h('option', { value: z })));
}

/**
 * A small form's fields, each with its label, hint and the place for the API's error about it.
 * `prefix` keeps ids unique when a page holds several forms (a row being renamed, the add form).
 */
export function formFields(prefix: string, status: HTMLElement) {
  const controls = new Map<string, HTMLInputElement | HTMLSelectElement>();
  const errors = new Map<string, HTMLElement>();
  return {
    controls,
    row(name: string, label: string, input: HTMLInputElement | HTMLSelectElement, hint = '') {
      input.id = `${prefix}-${name}`;
      input.name = name;
      input.setAttribute('aria-describedby', `${prefix}-${name}-error`);
      controls.set(name, input);
      const error = h('span', { className: 'field-error', attrs: { id: `${prefix}-${name}-error`, 'data-error-for': name } });
      errors.set(name, error);
      return h('div', { className: input.type === 'checkbox' ? 'field field-bool' : 'field' }, h('label', { attrs: { for: input.id } }, label), input, hint ? h('span', { className: 'hint' }, hint) : null, error);
    },
    clear() {
      replace(status);
      for (const e of errors.values()) replace(e);
    },
    /** The API's error next to the field its message names (`name: ...`), else in the form's status line. */
    show(error: unknown) {
      const message = error instanceof ApiError ? error.message : String(error);
      const field = fieldOfMessage(message, [...controls.keys()]);
      const where = field && errors.get(field);
      if (where && field) {
        replace(where, message);
        controls.get(field)?.focus();
      } else replace(status, message);
    },
  };
}

/**
 * A secret the API shows once (a token, a signing secret): in a read-only field to select, with a
 * copy button, and the warning that it will not be shown again.
 */
export function secretOnce(id: string, label: string, secret: string, after: string) {
  const input = h('input', { className: 'secret-value', attrs: { id, type: 'text', readonly: true, spellcheck: 'false', autocomplete: 'off' }, value: secret });
  const copied = h('span', { className: 'notice', attrs: { role: 'status' } });
  const copy = h(
    'button',
    {
      className: 'secondary',
      attrs: { type: 'button', id: `${id}-copy` },
      on: {
        click: () => {
          input.select();
          navigator.clipboard.writeText(secret).then(
            () => replace(copied, 'Copied.'),
            () => replace(copied, 'Selected: copy it with the keyboard (Ctrl+C or ⌘C).'),
          );
        },
      },
    },
    'Copy',
  );
  return h('div', { className: 'secret-once', attrs: { role: 'group', 'aria-labelledby': `${id}-label` } }, h('label', { attrs: { for: id, id: `${id}-label` } }, label), h('div', { className: 'toolbar' }, input, copy, copied), h('p', { className: 'hint' }, `Shown only now: keep it before leaving this page. ${after}`));
}
