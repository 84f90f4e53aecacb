import { chartPanel, partialIndex, timeAxis, timeLabels } from '../components/chart-panel.js';
import { type Context, type ViewModule, namesOf } from '../lib/context.js';
import { code, count, h, integer, localTime, notice, percent, replace } from '../lib/dom.js';
import { clientTrendParams, trendParams } from '../lib/params.js';
import { rangeLabel, scopeText } from '../lib/state.js';
import type { ClientTrend, DeclarationTrend, ExtensionTrend, RequiredTrend } from '../lib/types.js';

/** How many extension lines one chart shows (the most negotiated ones; the extension filter picks others). */
const TOP_EXTENSIONS = 8;

const TOP_CLIENTS = 10;

/** The fewest steps a chart shows when the steps before the range's first request are left out. */
const MIN_STEPS = 12;

/** A trend answer's frame: what every chart's steps are. */
interface Frame {
  times: string[];
  stepMinutes: number;
  partialFrom: string | null;
}

/**
 * The steps a chart draws: from the first that holds a request (a young install's hours of nothing before it would
 * squeeze its data into a few pixels at the right), but at least {@link MIN_STEPS}; the steps not final yet marked.
 */
function steps(frame: Frame, firstTime: string | undefined): { skip: number; labels: string[]; partialFrom: number | undefined } {
  const skip = Math.max(0, Math.min(firstTime === undefined ? 0 : frame.times.indexOf(firstTime), frame.times.length - MIN_STEPS));
  const times = frame.times.slice(skip);
  return { skip, labels: timeLabels(times, frame.stepMinutes), partialFrom: partialIndex(times, frame.partialFrom) };
}

class TrendsView implements ViewModule {
  /** The clients chart follows rows by client name or by version. */
  readonly rowsBy = ['client', 'client_version'] as const;

  async clientNames(context: Context): Promise<string[]> {
    return namesOf((await context.load<ClientTrend>('trends/clients', clientTrendParams(context.state))).clients);
  }

  private body!: HTMLElement;

  mount(root: HTMLElement): void {
    this.body = h('div', { class: 'charts' });
    replace(root, h('h2', null, 'Trends'), this.body);
  }

  async update(context: Context): Promise<void> {
    const { state } = context;
    const params = trendParams(state);
    let data: [ExtensionTrend, DeclarationTrend, RequiredTrend, ClientTrend];
    try {
      data = await Promise.all([
        context.load<ExtensionTrend>('trends/extensions', params),
        context.load<DeclarationTrend>('trends/declarations', params),
        context.load<RequiredTrend>('trends/required', params),
        context.load<ClientTrend>('trends/clients', clientTrendParams(state)),
      ]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const [extensions, declarations, required, clients] = data;
    const total = declarations.requests.reduce((sum, n) => sum + n, 0);
    const firstTime = declarations.times[declarations.requests.findIndex((n) => n > 0)];
    const ext = steps(extensions, firstTime);
    const decl = steps(declarations, firstTime);
    const req = steps(required, firstTime);
    const cli = steps(clients, firstTime);
    const intro = h(
      'p',
      { class: 'summary' },
      `${rangeLabel(state)}, ${scopeText(state)}, steps of ${extensions.stepMinutes} min: ${count(total, 'request')}.`,
      decl.skip > 0 && firstTime !== undefined ? ` No request before ${localTime(Date.parse(firstTime))} in this range: the charts begin shortly before.` : '',
    );
    if (total === 0) {
      replace(
        this.body,
        intro,
        notice(
          'empty',
          'No requests in this range.',
          'Requests appear here once an MCP server runs with the agent (',
          code('node --import @extscope/agent/register server.js'),
          ') pointed at this collector; with data elsewhere, choose a longer time range or clear the filters.',
        ),
      );
      return;
    }
    const filter = state.cols.trim().toLowerCase();
    const ranked = extensions.extensions
      .filter((entry) => filter === '' || entry.id.toLowerCase().includes(filter))
      .map((entry) => ({ entry, negotiated: entry.negotiated.reduce((sum, n) => sum + n, 0) }))
      .sort((a, b) => b.negotiated - a.negotiated || (a.entry.id < b.entry.id ? -1 : 1));
    const shown = ranked.slice(0, TOP_EXTENSIONS);
    const share = (n: number): string => percent(n / total, 1);
    const shareSummary =
      shown.length === 0
        ? 'No extension in this range.'
        : `Over the range: ${shown.map(({ entry, negotiated }) => `${entry.id} ${share(negotiated)}`).join(', ')}${ranked.length > shown.length ? `; ${ranked.length - shown.length} more (filter the extensions to see them)` : ''}.`;
    const declTotals = { declared: sum(declarations.declared), none: sum(declarations.none), unknown: sum(declarations.unknown) };
    // The 100 busiest come back (they also fill the client filter); the chart shows 10 and sums the rest.
    const top = clients.clients.slice(0, TOP_CLIENTS);
    const rest = clients.clients.slice(TOP_CLIENTS);
    const others = {
      clients: clients.other.clients + rest.length,
      total: clients.other.total + sum(rest.map((client) => client.total)),
      requests: clients.other.requests.map((n, index) => n + sum(rest.map((client) => client.requests[index] ?? 0))),
    };
    const clientSeries = top.map((client) => ({ label: client.client, data: client.requests.slice(cli.skip) }));
    if (others.clients > 0) clientSeries.push({ label: `${count(others.clients, 'other client')}`, data: others.requests.slice(cli.skip) });
    replace(
      this.body,
      intro,
      chartPanel(
        'chart-share',
        {
          kind: 'line',
          percent: true,
          title: 'Negotiated share per extension',
          labels: ext.labels,
          partialFrom: ext.partialFrom,
          xTitle: timeAxis(extensions.stepMinutes),
          yTitle: 'negotiated share',
          series: shown.map(({ entry }) => ({ label: entry.id, data: entry.negotiatedShare.slice(ext.skip) })),
        },
        shareSummary,
      ),
      chartPanel(
        'chart-declarations',
        {
          kind: 'bar',
          stacked: true,
          title: 'Client declaration states (requests)',
          labels: decl.labels,
          partialFrom: decl.partialFrom,
          xTitle: timeAxis(declarations.stepMinutes),
          yTitle: 'requests per step',
          series: [
            { label: 'declared', data: declarations.declared.slice(decl.skip) },
            { label: 'none (no extensions)', data: declarations.none.slice(decl.skip) },
            { label: 'unknown (no capabilities received)', data: declarations.unknown.slice(decl.skip) },
          ],
        },
        `declared ${integer(declTotals.declared)}, none ${integer(declTotals.none)}, unknown ${integer(declTotals.unknown)} requests.`,
      ),
      chartPanel(
        'chart-required',
        {
          kind: 'bar',
          title: '-32021 answers (missing required client capability)',
          labels: req.labels,
          partialFrom: req.partialFrom,
          xTitle: timeAxis(required.stepMinutes),
          yTitle: 'answers per step',
          series: [
            { label: '-32021 answers', data: required.errors.slice(req.skip) },
            ...required.extensions.slice(0, 5).map((entry) => ({ label: `naming ${entry.id}`, data: entry.counts.slice(req.skip) })),
          ],
        },
        required.total === 0
          ? 'No -32021 answer in this range.'
          : `${count(required.total, 'answer')}; named: ${required.extensions.map((entry) => `${entry.id} ${integer(entry.total)}`).join(', ')}.`,
      ),
      chartPanel(
        'chart-clients',
        {
          kind: 'line',
          title: `Requests per client${state.group === 'client_version' ? ' version' : ''}`,
          labels: cli.labels,
          partialFrom: cli.partialFrom,
          xTitle: timeAxis(clients.stepMinutes),
          yTitle: 'requests per step',
          series: clientSeries,
        },
        `${top.map((client) => `${client.client} ${integer(client.total)}`).join(', ')}${others.clients > 0 ? `; others ${integer(others.total)}` : ''}.`,
      ),
    );
  }
}

const sum = (values: number[]): number => values.reduce((total, n) => total + n, 0);

export const trendsView = new TrendsView();
