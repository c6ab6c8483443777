/**
 * Builds DOM nodes. Every value from the API enters the page through here as a text node or an
 * attribute value, never as markup: there is no innerHTML anywhere in the dashboard.
 */

export type Child = Node | string | number | null | undefined | false;

export interface Props {
  className?: string;
  /** Attributes, set with setAttribute (so they are values, never markup). */
  attrs?: Record<string, string | number | boolean | undefined>;
  /** Event listeners. */
  on?: { [K in keyof HTMLElementEventMap]?: (event: HTMLElementEventMap[K]) => void };
  /** Properties of form controls. */
  value?: string;
  checked?: boolean;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props.className) el.className = props.className;
  for (const [name, value] of Object.entries(props.attrs ?? {})) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : String(value));
  }
  for (const [type, listener] of Object.entries(props.on ?? {})) el.addEventListener(type, listener as EventListener);
  if (props.value !== undefined) (el as HTMLInputElement).value = props.value;
  if (props.checked !== undefined) (el as HTMLInputElement).checked = props.checked;
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

/** Replaces an element's content with the given children. */
export function replace(parent: Element, ...children: Child[]) {
  parent.replaceChildren();
  append(parent, ...children);
}

/** A link inside the dashboard (hash routes: the server serves one page). */
export const link = (route: string, ...children: Child[]) => h('a', { attrs: { href: `#${route}` } }, ...children);
