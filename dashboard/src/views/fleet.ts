import type { Context, ViewModule } from '../lib/context.js';
import { breakableId, code, count, h, hidden, notice, replace, time } from '../lib/dom.js';
import { href } from '../lib/state.js';
import type { BuildView, BuildsResponse, InstanceView, InstancesResponse } from '../lib/types.js';

/** Instances per request, and how many requests the view makes at most: past that it says how many it leaves out. */
const PAGE_SIZE = 500;
const MAX_PAGES = 2;

/**
 * Pages through the instances (of one service when the filter is set; with those that ended when the switch is on),
 * at most {@link MAX_PAGES} pages, and reads the builds beside them.
 */
async function loadFleet(context: Context): Promise<{ instances: InstanceView[]; total: number; builds: BuildView[] }> {
  const service = context.state.service === '' ? undefined : context.state.service;
  const ended = context.state.ended ? 'true' : undefined;
  const builds = context.load<BuildsResponse>('builds', { service });
  const instances: InstanceView[] = [];
  let total = 0;
  let offset: number | null = 0;
  for (let page = 0; page < MAX_PAGES && offset !== null; page++) {
    const response: InstancesResponse = await context.load<InstancesResponse>('instances', { service, ended, limit: PAGE_SIZE, offset });
    instances.push(...response.instances);
    total = response.total;
    offset = response.nextOffset;
  }
  return { instances, total, builds: (await builds).builds };
}

/**
 * A row of a service's table: a long-lived instance, or a build's sessions (stdio processes, one per client
 * session) as one row, shown by the newest of them listed (what a build's sessions advertise is what it ships).
 */
type FleetRow = { kind: 'instance'; instance: InstanceView } | { kind: 'build'; build: BuildView; newest: InstanceView | undefined };

const rowInstance = (row: FleetRow): InstanceView | undefined => (row.kind === 'instance' ? row.instance : row.newest);

/**
 * Instances grouped by service, with the ids each advertises now. Settings variants (one id, several settings
 * fingerprints) get letters per service; an instance whose set differs from another live one of its service is
 * marked by text and a stripe, not by colour alone.
 */
class FleetView implements ViewModule {
  private body!: HTMLElement;
  private endedSwitch!: HTMLInputElement;
  private context: Context | undefined;

  mount(root: HTMLElement): void {
    this.body = h('div', { class: 'fleet' });
    this.endedSwitch = h('input', { type: 'checkbox', id: 'fleet-ended' });
    this.endedSwitch.addEventListener('change', () => this.context?.navigate({ ended: this.endedSwitch.checked }));
    replace(
      root,
      h('h2', null, 'Fleet'),
      h(
        'p',
        { class: 'hint' },
        'What each server advertises now (from its latest report). A build (server name@version on a host, and its deployment) lists its sessions — stdio servers run one process per client session — in one row; long-lived instances have a row each. Drift: the live instances of a service that lack ids, add them or set them differently against the set most of them advertise; a tie is a split, with no majority.',
      ),
      h('p', { class: 'fleet-switches' }, h('label', { for: 'fleet-ended' }, this.endedSwitch, ' show ended sessions and instances')),
      this.body,
    );
  }

  async update(context: Context): Promise<void> {
    const { state } = context;
    this.context = context;
    this.endedSwitch.checked = state.ended;
    let response: { instances: InstanceView[]; total: number; builds: BuildView[] };
    try {
      response = await loadFleet(context);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const instances = response.instances.filter(
      (instance) => (state.service === '' || instance.service === state.service) && (state.instance === '' || instance.instanceId === state.instance),
    );
    // Builds of sessions: those with one running (or any, when ended ones are shown); one named instance shows alone.
    const builds =
      state.instance !== ''
        ? []
        : response.builds.filter(
            (build) => build.sessions > 0 && (state.ended || build.liveSessions > 0) && (state.service === '' || build.service === state.service),
          );
    if (response.instances.length === 0 && builds.length === 0 && state.service === '') {
      replace(
        this.body,
        notice(
          'empty',
          state.ended ? 'No instance has reported yet.' : 'Nothing is running now.',
          'Run your MCP server with ',
          code('node --import @extscope/agent/register server.js'),
          state.ended ? '; idle instances report what they advertise at every export.' : '; switch on "show ended" for the sessions and instances that ended.',
        ),
      );
      return;
    }
    if (instances.length === 0 && builds.length === 0) {
      replace(this.body, notice('empty', 'No instance matches the service and instance filters.', 'Clear them to see the whole fleet.'));
      return;
    }
    const services = new Map<string, FleetRow[]>();
    const add = (service: string | null, row: FleetRow): void => {
      const key = service ?? '(no service name)';
      const list = services.get(key) ?? [];
      list.push(row);
      services.set(key, list);
    };
    // A build's row shows its newest listed session (live first), so what it advertises and how it drifts are current.
    const newest = new Map<string, InstanceView>();
    for (const instance of instances) {
      if (!instance.session || state.instance !== '') continue;
      const seen = newest.get(instance.build);
      const running = instance.ended === null;
      if (seen === undefined || (running && seen.ended !== null) || (running === (seen.ended === null) && instance.lastSeen > seen.lastSeen))
        newest.set(instance.build, instance);
    }
    for (const build of builds) add(build.service, { kind: 'build', build, newest: newest.get(build.build) });
    for (const instance of instances) if (!instance.session || state.instance !== '') add(instance.service, { kind: 'instance', instance });
    const sections = [...services.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([service, list]) => this.serviceSection(context, service, list));
    const left = response.total - response.instances.length;
    const more =
      left > 0
        ? h(
            'p',
            { class: 'hint more', role: 'status' },
            `Showing ${response.instances.length} of ${response.total} instances: ${left} more not shown.${state.service === '' ? ' Filter by service to see them.' : ''}`,
          )
        : null;
    replace(this.body, ...(more === null ? [] : [more]), ...sections);
  }

  private serviceSection(context: Context, service: string, rows: FleetRow[]): HTMLElement {
    const shown = rows.map(rowInstance).filter((instance): instance is InstanceView => instance !== undefined);
    const ids = [...new Set(shown.flatMap((instance) => instance.advertises.map((entry) => entry.id)))].sort();
    // Letters for each distinct settings fingerprint of an id within the service: A, B, …
    const letters = new Map<string, Map<string, string>>();
    for (const id of ids) {
      const prints = [...new Set(shown.flatMap((instance) => instance.advertises.find((entry) => entry.id === id)?.fingerprints ?? []))].sort();
      letters.set(id, new Map(prints.map((print, index) => [print, String.fromCharCode(65 + (index % 26))])));
    }
    const drifting = rows.filter((row) => rowInstance(row)?.differs === true).length;
    const variants = ids.filter((id) => (letters.get(id)?.size ?? 0) > 1);
    const extLink = (id: string): HTMLElement => {
      const link = h('a', { href: href(context.state, { view: 'extension', ext: id }), class: 'ext-id ext-wrap' }, breakableId(id));
      link.addEventListener('click', (event) => {
        event.preventDefault();
        context.navigate({ view: 'extension', ext: id });
      });
      return link;
    };
    const head = h(
      'tr',
      null,
      h('th', { scope: 'col' }, 'Build or instance'),
      h('th', { scope: 'col' }, 'Server'),
      h('th', { scope: 'col' }, 'Last seen'),
      h('th', { scope: 'col' }, 'Status'),
      ...ids.map((id) => h('th', { scope: 'col', class: 'ext' }, extLink(id))),
    );
    const order = (row: FleetRow): string => (row.kind === 'build' ? `0${row.build.label}` : `1${row.instance.instanceId ?? ''}`);
    const body = rows
      .slice()
      .sort((a, b) => Number(rowInstance(b)?.differs === true) - Number(rowInstance(a)?.differs === true) || order(a).localeCompare(order(b)))
      .map((row) => {
        const instance = rowInstance(row);
        const status: (HTMLElement | string)[] = [];
        if (row.kind === 'build')
          status.push(h('span', { class: 'badge badge-sessions' }, `${row.build.liveSessions} live of ${count(row.build.sessions, 'session')}`));
        if (instance !== undefined) {
          status.push(...driftBadges(instance));
          if (row.kind === 'instance' && instance.ended !== null) status.push(h('span', { class: 'badge badge-stale' }, 'ended'));
          if (instance.stale) status.push(h('span', { class: 'badge badge-stale' }, 'stale'));
          if (instance.settingsVariants > 0) status.push(h('span', { class: 'badge' }, `${count(instance.settingsVariants, 'id')} with several settings`));
          if (instance.advertisedAt === null || instance.advertisedAt === undefined) status.push(h('span', { class: 'badge' }, 'no advertisement received'));
          if (status.length === (row.kind === 'build' ? 1 : 0) && instance.ended === null)
            status.push(h('span', { class: 'badge badge-ok' }, instance.drift?.role === 'majority' ? '✓ majority set' : '✓ consistent'));
        }
        const cells = ids.map((id) => {
          const entry = instance?.advertises.find((candidate) => candidate.id === id);
          if (entry === undefined) return h('td', { class: 'adv adv-no' }, h('span', { 'aria-hidden': 'true' }, '—'), hidden('not advertised'));
          // Letters only where the service has several settings variants of the id.
          const variantsOfId = letters.get(id);
          const marks = (variantsOfId?.size ?? 0) > 1 ? entry.fingerprints.map((print) => variantsOfId?.get(print) ?? '?').join('+') : '';
          return h(
            'td',
            {
              class: 'adv adv-yes',
              title:
                entry.fingerprints.length === 0
                  ? 'advertised (no fingerprint)'
                  : `${entry.fingerprints.length === 1 ? 'settings fingerprint' : 'settings fingerprints'}: ${entry.fingerprints.join(', ')}`,
            },
            h('span', { 'aria-hidden': 'true' }, '✔'),
            hidden('advertised'),
            marks === '' ? '' : h('span', { class: 'variant' }, ` ${marks}`),
          );
        });
        const name =
          row.kind === 'build'
            ? h('th', { scope: 'row', class: 'build' }, h('span', null, row.build.label), h('span', { class: 'sub' }, 'build: its stdio sessions'))
            : h(
                'th',
                { scope: 'row' },
                h('span', { class: 'mono' }, row.instance.instanceId ?? '(no instance id)'),
                row.instance.host ? h('span', { class: 'sub' }, row.instance.host) : null,
              );
        const server = row.kind === 'build' ? row.build : row.instance;
        const ended = instance !== undefined && instance.ended !== null && row.kind === 'instance';
        return h(
          'tr',
          { class: instance?.differs === true ? 'drift' : instance?.stale === true || ended ? 'stale' : '' },
          name,
          h('td', null, server.serverName ?? '–', server.serverVersion ? `@${server.serverVersion}` : ''),
          h('td', null, instance === undefined ? '–' : time(instance.lastSeen)),
          h('td', null, ...status),
          ...cells,
        );
      });
    const buildRows = rows.filter((row) => row.kind === 'build');
    const instanceRows = rows.length - buildRows.length;
    const summary: string[] = [];
    if (buildRows.length > 0) {
      const live = buildRows.reduce((sum, row) => sum + row.build.liveSessions, 0);
      const total = buildRows.reduce((sum, row) => sum + row.build.sessions, 0);
      summary.push(`${count(buildRows.length, 'build')} (${live} live of ${count(total, 'session')})`);
    }
    const endedRows = rows.filter((row) => row.kind === 'instance' && row.instance.ended !== null).length;
    if (instanceRows > 0 || buildRows.length === 0) summary.push(`${count(instanceRows, 'instance')}${endedRows > 0 ? ` (${endedRows} ended)` : ''}`);
    summary.push(count(ids.length, 'extension id'));
    if (drifting > 0) summary.push(`${count(drifting, buildRows.length === 0 ? 'instance' : 'row')} ${drifting === 1 ? 'differs' : 'differ'} from the rest`);
    const split = shown.find((instance) => instance.drift?.role === 'split');
    if (split !== undefined) summary.push(`no majority: the ${split.drift?.live ?? 0} live instances are split by what they advertise`);
    if (variants.length > 0) summary.push(`settings variants of ${variants.join(', ')} (letters: distinct fingerprints)`);
    return h(
      'section',
      { class: 'service', 'aria-label': `Service ${service}` },
      h('h3', null, service, drifting > 0 ? h('span', { class: 'badge badge-drift' }, 'drift') : null),
      h('p', { class: 'summary' }, summary.join(' · ')),
      h('div', { class: 'grid-wrap' }, h('table', { class: 'fleet-table' }, h('thead', null, head), h('tbody', null, ...body))),
    );
  }
}

/**
 * What marks the odd one out, in words: what it lacks, adds or sets differently against its service's majority
 * (or, on a split, against the other side). A split side that lacks nothing is said to be one, not flagged.
 */
function driftBadges(instance: InstanceView): HTMLElement[] {
  const drift = instance.drift;
  if (drift === null || drift === undefined || drift.role === 'majority') return [];
  const badges: HTMLElement[] = [];
  if (drift.lacks.length > 0) badges.push(h('span', { class: 'badge badge-drift' }, `lacks ${drift.lacks.join(', ')}`));
  if (drift.settingsDiffer.length > 0) badges.push(h('span', { class: 'badge badge-drift' }, `settings differ: ${drift.settingsDiffer.join(', ')}`));
  if (drift.role === 'minority' && drift.extra.length > 0) badges.push(h('span', { class: 'badge badge-drift' }, `also advertises ${drift.extra.join(', ')}`));
  if (drift.role === 'split') badges.push(h('span', { class: 'badge' }, `split: ${drift.members} of ${drift.live} advertise this set`));
  return badges;
}

export const fleetView = new FleetView();
