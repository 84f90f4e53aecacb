import { type AuthRequired, storeToken, storedToken } from './lib/api.js';
import { type Context, Loader, type ViewModule, isAuthError } from './lib/context.js';
import { h, localClock, notice, replace } from './lib/dom.js';
import { FilterBar } from './components/filter-bar.js';
import { RejectionsStrip } from './components/rejections-strip.js';
import { type State, type View, href, parseState, serializeState } from './lib/state.js';
import type { AlertsResponse } from './lib/types.js';
import { alertsView } from './views/alerts.js';
import { changesView } from './views/changes.js';
import { extensionView } from './views/extension.js';
import { fleetView } from './views/fleet.js';
import { matrixView } from './views/matrix/view.js';
import { trendsView } from './views/trends.js';

const VIEW_MODULES: Record<View, ViewModule> = {
  matrix: matrixView,
  fleet: fleetView,
  extension: extensionView,
  trends: trendsView,
  changes: changesView,
  alerts: alertsView,
};
const VIEW_LABELS: Record<View, string> = {
  matrix: 'Support matrix',
  fleet: 'Fleet',
  extension: 'Extension',
  trends: 'Trends',
  changes: 'What changed',
  alerts: 'Alerts',
};
const REFRESH_MS = 30_000;

const loader = new Loader();
let state: State = parseState(location.search);
let mounted: View | undefined;
let generation = 0;
let timer: ReturnType<typeof setInterval> | undefined;

const main = h('main', { id: 'main', tabindex: -1 });
const viewRoot = h('div', { class: 'view' });
const updated = h('span', { class: 'updated', 'aria-live': 'polite' }, 'Not loaded yet');
const pause = h('button', { type: 'button', id: 'pause', 'aria-pressed': 'false' }, 'Pause auto-refresh');
const refresh = h('button', { type: 'button', id: 'refresh' }, 'Refresh now');
const forget = h('button', { type: 'button', id: 'forget-token', hidden: true }, 'Forget token');
const nav = h('nav', { 'aria-label': 'Views' }, h('ul'));

function navigate(changes: Partial<State>, mode: 'push' | 'replace' = 'push'): void {
  const next = { ...state, ...changes };
  const url = `${location.pathname}${serializeState(next)}`;
  if (url === `${location.pathname}${location.search}`) return;
  if (mode === 'push') history.pushState(null, '', url);
  else history.replaceState(null, '', url);
  state = next;
  loader.dropPrefetches(next);
  void render();
}

const filters = new FilterBar(navigate);
const rejections = new RejectionsStrip();

/** Alerts firing now, for the Alerts tab (undefined: not known, e.g. no rule engine runs). */
let firing: number | undefined;

async function countFiring(): Promise<void> {
  try {
    firing = (await loader.load<AlertsResponse>('alerts', { state: 'firing', limit: '1' })).total;
  } catch {
    firing = undefined;
  }
  renderNav();
}

function renderNav(): void {
  const list = nav.querySelector('ul');
  if (list === null) return;
  replace(
    list,
    (Object.keys(VIEW_LABELS) as View[]).map((view) => {
      const badge =
        view === 'alerts' && firing !== undefined && firing > 0
          ? h('span', { class: 'nav-count', 'aria-label': `${firing} firing` }, ` ${firing} firing`)
          : null;
      const link = h(
        'a',
        { href: href(state, { view, cellClient: '', cellExt: '' }), 'aria-current': state.view === view ? 'page' : null },
        VIEW_LABELS[view],
        badge,
      );
      link.addEventListener('click', (event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        navigate({ view, cellClient: '', cellExt: '' });
      });
      return h('li', null, link);
    }),
  );
}

function context(current: number): Context {
  return {
    state,
    navigate,
    load: (path, params) => loader.load(path, params),
    prefetch: (path, params, keep) => loader.prefetch(path, params, keep),
    isCurrent: () => current === generation,
    loaded: () => {
      const now = new Date();
      replace(updated, 'Last updated ', h('time', { datetime: now.toISOString() }, localClock(now.getTime())), state.paused ? ' (auto-refresh paused)' : '');
    },
    fail: (error) => showError(error),
  };
}

async function render(): Promise<void> {
  const current = ++generation;
  // Marks for the benchmark (test/bench/dashboard.mjs): from the start of a render to its data on screen.
  performance.clearMarks();
  performance.mark('extscope:render-start');
  const ctx = context(current);
  document.title = `${VIEW_LABELS[state.view]} · extscope`;
  renderNav();
  void countFiring();
  forget.hidden = storedToken() === null;
  pause.textContent = state.paused ? 'Resume auto-refresh' : 'Pause auto-refresh';
  pause.setAttribute('aria-pressed', String(state.paused));
  schedule();
  main.setAttribute('aria-busy', 'true');
  delete document.body.dataset['ready'];
  const view = VIEW_MODULES[state.view];
  if (mounted !== state.view || viewRoot.dataset['failed'] === 'true') {
    delete viewRoot.dataset['failed'];
    view.mount(viewRoot, ctx);
    mounted = state.view;
  }
  await Promise.all([
    filters.update(ctx, view.clientNames?.(ctx), view.rowsBy).catch(() => undefined),
    rejections.update(ctx),
    view.update(ctx).catch((error: unknown) => ctx.isCurrent() && showError(error)),
  ]);
  if (!ctx.isCurrent()) return;
  // The view shows the current state's data: for assistive technology, and for the tests and the benchmark.
  main.setAttribute('aria-busy', 'false');
  document.body.dataset['ready'] = String(current);
  performance.mark('extscope:ready');
  // After the next frame has been painted: what the user sees, with the main thread free again.
  requestAnimationFrame(() => setTimeout(() => current === generation && performance.mark('extscope:painted'), 0));
}

function showError(error: unknown): void {
  viewRoot.dataset['failed'] = 'true';
  if (isAuthError(error)) {
    replace(viewRoot, tokenForm(error));
    return;
  }
  replace(viewRoot, notice('error', 'The collector’s API did not answer as expected.', (error as Error).message, ' — the view retries at the next refresh.'));
}

function tokenForm(error: AuthRequired): HTMLElement {
  const input = h('input', { type: 'password', id: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const form = h(
    'form',
    { class: 'token-form', 'aria-labelledby': 'token-title' },
    h('h2', { id: 'token-title' }, error.rejected ? 'The read token was not accepted' : 'This collector needs a read token'),
    h(
      'p',
      { role: error.rejected ? 'alert' : null },
      error.rejected
        ? 'The collector refused the token given (401). Enter the value of EXTSCOPE_READ_TOKEN the collector was started with.'
        : 'The collector was started with EXTSCOPE_READ_TOKEN. Enter it once: it is kept for this browser session only and sent as a bearer header to /api/v1.',
    ),
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Read token'), input),
    h('button', { type: 'submit' }, 'Use token'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value === '') return;
    storeToken(input.value);
    loader.clear();
    void render();
  });
  queueMicrotask(() => input.focus());
  return form;
}

function schedule(): void {
  clearInterval(timer);
  timer = undefined;
  if (state.paused) return;
  timer = setInterval(() => {
    if (document.hidden) return;
    loader.clear();
    void render();
  }, REFRESH_MS);
}

pause.addEventListener('click', () => navigate({ paused: !state.paused }, 'replace'));
refresh.addEventListener('click', () => {
  loader.clear();
  void render();
});
forget.addEventListener('click', () => {
  storeToken(null);
  loader.clear();
  void render();
});
// Leaving the page: what is prefetched is aborted now, so that the collector stops reading it (the browser may
// otherwise let the request run on while the next page asks for its own).
window.addEventListener('pagehide', () => loader.clear());
window.addEventListener('popstate', () => {
  state = parseState(location.search);
  loader.dropPrefetches(state);
  void render();
});

const skip = h('a', { href: '#main', class: 'skip' }, 'Skip to content');
const header = h(
  'header',
  null,
  h('div', { class: 'brand' }, h('h1', null, 'extscope'), h('span', { class: 'tagline' }, 'measured MCP extension support')),
  nav,
  h('div', { class: 'refresh' }, updated, pause, refresh, forget),
);
replace(main, viewRoot);
document.body.replaceChildren(skip, header, filters.element, rejections.element, main);
void render();
