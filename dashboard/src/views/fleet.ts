import type { Context, ViewModule } from '../lib/context.js';
import { breakableId, code, count, h, hidden, notice, replace, time } from '../lib/dom.js';
import { href } from '../lib/state.js';
import type { InstanceView, InstancesResponse } from '../lib/types.js';

/** Instances per request, and how many requests the view makes at most: past that it says how many it leaves out. */
const PAGE_SIZE = 500;
const MAX_PAGES = 2;

/** Pages through the instances (of one service when the filter is set), at most {@link MAX_PAGES} pages. */
async function loadInstances(context: Context): Promise<{ instances: InstanceView[]; total: number }> {
  const service = context.state.service === '' ? undefined : context.state.service;
  const instances: InstanceView[] = [];
  let total = 0;
  let offset: number | null = 0;
  for (let page = 0; page < MAX_PAGES && offset !== null; page++) {
    const response: InstancesResponse = await context.load<InstancesResponse>('instances', { service, limit: PAGE_SIZE, offset });
    instances.push(...response.instances);
    total = response.total;
    offset = response.nextOffset;
  }
  return { instances, total };
}

/**
 * Instances grouped by service, with the ids each advertises now. Settings variants (one id, several settings
 * fingerprints) get letters per service; an instance whose set differs from another live one of its service is
 * marked by text and a stripe, not by colour alone.
 */
class FleetView implements ViewModule {
  private body!: HTMLElement;

  mount(root: HTMLElement): void {
    this.body = h('div', { class: 'fleet' });
    replace(
      root,
      h('h2', null, 'Fleet'),
      h(
        'p',
        { class: 'hint' },
        'What each server instance advertises now (from its latest report). Drift: the live instances of a service that lack ids, add them or set them differently against the set most of them advertise; a tie is a split, with no majority.',
      ),
      this.body,
    );
  }

  async update(context: Context): Promise<void> {
    const { state } = context;
    let response: { instances: InstanceView[]; total: number };
    try {
      response = await loadInstances(context);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const instances = response.instances.filter(
      (instance) => (state.service === '' || instance.service === state.service) && (state.instance === '' || instance.instanceId === state.instance),
    );
    if (response.instances.length === 0 && state.service === '') {
      replace(
        this.body,
        notice(
          'empty',
          'No instance has reported yet.',
          'Run your MCP server with ',
          code('node --import @extscope/agent/register server.js'),
          '; idle instances report what they advertise at every export.',
        ),
      );
      return;
    }
    if (instances.length === 0) {
      replace(this.body, notice('empty', 'No instance matches the service and instance filters.', 'Clear them to see the whole fleet.'));
      return;
    }
    const services = new Map<string, InstanceView[]>();
    for (const instance of instances) {
      const key = instance.service ?? '(no service name)';
      const list = services.get(key) ?? [];
      list.push(instance);
      services.set(key, list);
    }
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

  private serviceSection(context: Context, service: string, instances: InstanceView[]): HTMLElement {
    const ids = [...new Set(instances.flatMap((instance) => instance.advertises.map((entry) => entry.id)))].sort();
    // Letters for each distinct settings fingerprint of an id within the service: A, B, …
    const letters = new Map<string, Map<string, string>>();
    for (const id of ids) {
      const prints = [...new Set(instances.flatMap((instance) => instance.advertises.find((entry) => entry.id === id)?.fingerprints ?? []))].sort();
      letters.set(id, new Map(prints.map((print, index) => [print, String.fromCharCode(65 + (index % 26))])));
    }
    const drifting = instances.filter((instance) => instance.differs).length;
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
      h('th', { scope: 'col' }, 'Instance'),
      h('th', { scope: 'col' }, 'Server'),
      h('th', { scope: 'col' }, 'Last seen'),
      h('th', { scope: 'col' }, 'Status'),
      ...ids.map((id) => h('th', { scope: 'col', class: 'ext' }, extLink(id))),
    );
    const rows = instances
      .slice()
      .sort((a, b) => Number(b.differs) - Number(a.differs) || (a.instanceId ?? '').localeCompare(b.instanceId ?? ''))
      .map((instance) => {
        const status: (HTMLElement | string)[] = [];
        status.push(...driftBadges(instance));
        if (instance.stale) status.push(h('span', { class: 'badge badge-stale' }, 'stale'));
        if (instance.settingsVariants > 0) status.push(h('span', { class: 'badge' }, `${count(instance.settingsVariants, 'id')} with several settings`));
        if (instance.advertisedAt === null || instance.advertisedAt === undefined) status.push(h('span', { class: 'badge' }, 'no advertisement received'));
        if (status.length === 0) status.push(h('span', { class: 'badge badge-ok' }, instance.drift?.role === 'majority' ? '✓ majority set' : '✓ consistent'));
        const cells = ids.map((id) => {
          const entry = instance.advertises.find((candidate) => candidate.id === id);
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
        return h(
          'tr',
          { class: instance.differs ? 'drift' : instance.stale ? 'stale' : '' },
          h(
            'th',
            { scope: 'row' },
            h('span', { class: 'mono' }, instance.instanceId ?? '(no instance id)'),
            instance.host ? h('span', { class: 'sub' }, instance.host) : null,
          ),
          h('td', null, instance.serverName ?? '–', instance.serverVersion ? `@${instance.serverVersion}` : ''),
          h('td', null, time(instance.lastSeen)),
          h('td', null, ...status),
          ...cells,
        );
      });
    const summary = [count(instances.length, 'instance'), count(ids.length, 'extension id')];
    if (drifting > 0) summary.push(`${count(drifting, 'instance')} ${drifting === 1 ? 'differs' : 'differ'} from the rest`);
    const split = instances.find((instance) => instance.drift?.role === 'split');
    if (split !== undefined) summary.push(`no majority: the ${split.drift?.live ?? 0} live instances are split by what they advertise`);
    if (variants.length > 0) summary.push(`settings variants of ${variants.join(', ')} (letters: distinct fingerprints)`);
    return h(
      'section',
      { class: 'service', 'aria-label': `Service ${service}` },
      h('h3', null, service, drifting > 0 ? h('span', { class: 'badge badge-drift' }, 'drift') : null),
      h('p', { class: 'summary' }, summary.join(' · ')),
      h('div', { class: 'grid-wrap' }, h('table', { class: 'fleet-table' }, h('thead', null, head), h('tbody', null, ...rows))),
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
