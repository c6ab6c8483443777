/**
 * The job form's fields, derived from the OpenAPI document the gateway serves (cron_add's body
 * schema, itself derived from the settings table): a setting added to Tock appears in the form
 * without a change here. Pure: the unit tests run it under Node.
 */

export type FieldKind = 'text' | 'multiline' | 'secret' | 'int' | 'optionalInt' | 'bool' | 'choice' | 'group';

export interface Field {
  name: string;
  kind: FieldKind;
  doc: string;
  min?: number;
  max?: number;
  maxLength?: number;
  options?: string[];
  default?: string | number | boolean;
  required: boolean;
}

/** What the form's controls hold: text for every input, a boolean for a checkbox. */
export type FormValues = Record<string, string | boolean>;

/** Shown first, in this order; every other setting goes under "More settings". */
export const PRIMARY = ['url', 'expression', 'timezone', 'filter', 'name', 'group', 'httpMethod', 'timeout', 'retries', 'retryBackoff', 'notifyChannels'];
/** Settings whose text spans lines. */
const MULTILINE = new Set(['postData', 'httpHeaders']);
/** cron_add parameters that are not settings of the job (one extra run): not part of the form. */
const NOT_SETTINGS = new Set(['run', 'payload']);

interface Schema {
  type?: string | string[];
  description?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  enum?: string[];
  default?: string | number | boolean;
  writeOnly?: boolean;
}

function kindOf(name: string, s: Schema): FieldKind {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (name === 'group') return 'group';
  if (s.writeOnly) return 'secret';
  if (s.enum) return 'choice';
  if (types.includes('boolean')) return 'bool';
  if (types.includes('integer')) return types.includes('null') ? 'optionalInt' : 'int';
  return MULTILINE.has(name) ? 'multiline' : 'text';
}

/** The form's fields from /api/v1/openapi.json, primary ones first. */
export function fieldsFromOpenApi(doc: unknown): Field[] {
  const body = (doc as { paths?: Record<string, { post?: { requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, Schema>; required?: string[] } }> } } }> })
    ?.paths?.['/api/v1/cron_add']?.post?.requestBody?.content?.['application/json']?.schema;
  if (!body?.properties) throw new Error('the OpenAPI document has no cron_add body schema');
  const required = new Set(body.required ?? []);
  const fields = Object.entries(body.properties)
    .filter(([name]) => !NOT_SETTINGS.has(name))
    .map(([name, s]): Field => ({
      name,
      kind: kindOf(name, s),
      doc: s.description ?? '',
      min: s.minimum,
      max: s.maximum,
      maxLength: s.maxLength,
      options: s.enum,
      default: s.default,
      required: required.has(name),
    }));
  const rank = (name: string) => (PRIMARY.includes(name) ? PRIMARY.indexOf(name) : PRIMARY.length);
  return fields.sort((a, b) => rank(a.name) - rank(b.name));
}

/** A new job's form: each field's documented default (the time zone: the account's). */
export function defaultValues(fields: Field[], accountTimezone: string): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    if (f.kind === 'bool') values[f.name] = f.default === undefined ? false : Boolean(f.default);
    else if (f.name === 'timezone') values[f.name] = accountTimezone;
    else values[f.name] = f.default === undefined || f.default === null ? '' : String(f.default);
  }
  return values;
}

/** An existing job's form, from its record. A secret is never in a record: its field starts empty (empty keeps it). */
export function valuesFromRecord(fields: Field[], record: Record<string, unknown>): FormValues {
  const values: FormValues = {};
  for (const f of fields) {
    const v = record[f.name];
    if (f.kind === 'bool') values[f.name] = v === true;
    else if (f.kind === 'secret' || v === null || v === undefined) values[f.name] = '';
    else values[f.name] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return values;
}

/**
 * The parameters of cron_add (no `original`) or cron_edit (`original`: the form as loaded). An
 * edit sends only what changed, so a masked URL or header left alone is kept as stored; an
 * emptied number that may be "none" (group, notifyTime) is sent as 0, which clears it. An empty
 * secret means "keep". Values are sent as the text typed: the API reports what is wrong with it.
 */
export function paramsFromValues(fields: Field[], values: FormValues, original?: FormValues): Record<string, string | boolean> {
  const params: Record<string, string | boolean> = {};
  for (const f of fields) {
    const value = values[f.name];
    if (value === undefined) continue;
    if (original && value === original[f.name]) continue;
    if (typeof value === 'boolean') {
      params[f.name] = value;
      continue;
    }
    const text = f.kind === 'multiline' ? value : value.trim();
    if (f.kind === 'secret' && text === '') continue;
    if (text === '') {
      if (f.kind === 'group' || f.kind === 'optionalInt') {
        if (original) params[f.name] = '0';
      } else if (f.kind === 'text' || f.kind === 'multiline') {
        // A new job has "" by default anyway; an edit that empties a text clears it.
        if (original) params[f.name] = '';
      }
      // An emptied whole number (timeout, retries) is left out: there is no "none" to set.
      continue;
    }
    params[f.name] = text;
  }
  return params;
}

/**
 * The form field an API error names: messages start with the parameter ("expression: ..."), a
 * batch element's with its path. Undefined when the message names no field of the form.
 */
export function fieldOfMessage(message: string, names: readonly string[]): string | undefined {
  const m = /^(?:data\[\d+\]\.)?([A-Za-z]+)(?=[:[])/.exec(message);
  return m && names.includes(m[1]!) ? m[1] : undefined;
}

/**
 * The API shows a URL's credentials and header values masked (`https://***@host`, `Name: ***`)
 * and would store a `***` sent back as the secret itself. An edit leaves them alone unless the
 * field changed (see paramsFromValues); a changed field that still holds the mask is stopped
 * here, naming the field, before it reaches the API.
 */
export function maskedSecretLeft(values: FormValues, original: FormValues | undefined): { field: string; message: string } | undefined {
  if (!original) return undefined;
  const changed = (name: string) => typeof values[name] === 'string' && values[name] !== original[name];
  if (changed('url') && /^[a-z][a-z0-9+.-]*:\/\/[^/@]*\*\*\*[^/@]*@/i.test(String(values.url).trim())) {
    return { field: 'url', message: 'url: its credentials are shown masked (***); type them again (user:password@) or remove them to change the URL' };
  }
  if (changed('httpHeaders') && /^[^:\r\n]+:[ \t]*\*\*\*[ \t]*$/m.test(String(values.httpHeaders))) {
    return { field: 'httpHeaders', message: 'httpHeaders: header values are shown masked (***); type each value again to change the headers' };
  }
  return undefined;
}

/** The secrets of a job record that a copy of its form cannot carry (the API shows them masked, or not at all), in words. */
export function secretsNotCopied(record: Record<string, unknown>): string[] {
  const missing: string[] = [];
  if (record.hasPassword === true) missing.push('the password');
  if (typeof record.url === 'string' && /^[a-z][a-z0-9+.-]*:\/\/[^/@]*\*\*\*[^/@]*@/i.test(record.url)) missing.push("the URL's credentials");
  if (typeof record.httpHeaders === 'string' && /:[ \t]*\*\*\*[ \t]*$/m.test(record.httpHeaders)) missing.push('the header values');
  return missing;
}
