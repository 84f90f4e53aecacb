/**
 * The only way this page builds DOM: elements by createElement, text by text nodes. Everything that comes from
 * telemetry (client names, extension ids, service and instance names) is data, never markup; there is no
 * innerHTML anywhere in the page.
 */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | null | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (attributes !== null) {
    for (const [name, value] of Object.entries(attributes)) {
      if (value === null || value === undefined || value === false) continue;
      if (name === 'class') element.className = String(value);
      else element.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
}

export function replace(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/**
 * A link out of the page (a runbook, a trace in the tracing backend), only to an http(s) URL: anything else (a
 * `javascript:` URL a template or a label value made) is no link: undefined, and the caller shows what it has instead.
 */
export function externalLink(url: string | null | undefined, text: Child, attributes: Attributes = {}): HTMLElement | undefined {
  let parsed: URL | undefined;
  try {
    parsed = url === null || url === undefined ? undefined : new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return undefined;
  return h('a', { ...attributes, href: parsed.href, target: '_blank', rel: 'noopener noreferrer' }, text);
}

/** `<code>` text, for commands and ids in messages. */
export const code = (text: string): HTMLElement => h('code', null, text);

/** A message for an empty or failed view: what happened, and what to do about it. */
export function notice(kind: 'empty' | 'error' | 'info', title: string, ...body: (Child | Child[])[]): HTMLElement {
  return h(
    'div',
    { class: `notice notice-${kind}`, role: kind === 'error' ? 'alert' : 'status' },
    h('p', { class: 'notice-title' }, title),
    body.length > 0 ? h('p', null, ...body) : null,
  );
}

export function percent(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  return `${(value * 100).toFixed(digits)} %`;
}

const INTEGER = new Intl.NumberFormat('en');
export const integer = (value: number): string => INTEGER.format(value);

/** "3 min ago" etc., for last-seen columns (the exact time goes in a title and a <time> element). */
function ago(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} d ago`;
}

export function time(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: iso }, ago(iso));
}

/**
 * The page's one way of writing a time: local, 24-hour, with the zone shown (`4 Dec 2026, 13:14 UTC`); the exact
 * UTC instant is the element's `datetime` and title.
 */
const LOCAL_TIME = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
  timeZoneName: 'short',
});
export const localTime = (ms: number): string => LOCAL_TIME.format(ms);
const LOCAL_CLOCK = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
/** The time of day alone, with the zone (for "last updated"). */
export const localClock = (ms: number): string => LOCAL_CLOCK.format(ms);

export function at(iso: string): HTMLTimeElement {
  return h('time', { datetime: iso, title: iso }, localTime(Date.parse(iso)));
}

/** An extension id that may wrap after its `/` and `.` only, never inside a word (text nodes and <wbr>). */
export function breakableId(id: string): DocumentFragment {
  const fragment = document.createDocumentFragment();
  for (const part of id.split(/(?<=[/.])/)) {
    fragment.appendChild(document.createTextNode(part));
    fragment.appendChild(document.createElement('wbr'));
  }
  return fragment;
}

/** A visually hidden text for screen readers. */
export const hidden = (text: string): HTMLElement => h('span', { class: 'visually-hidden' }, text);

/** `1 answer`, `2 answers`. */
export const count = (n: number, singular: string, plural = `${singular}s`): string => `${integer(n)} ${n === 1 ? singular : plural}`;
