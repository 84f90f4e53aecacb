import type { Context } from '../lib/context.js';
import { h, replace } from '../lib/dom.js';
import { type Group, RANGES, type State, absoluteRange } from '../lib/state.js';
import type { InstanceView, InstancesResponse } from '../lib/types.js';

/**
 * The global filters: time range (with a custom from/to), service, instance, client, grouping. Each change is a
 * navigation (a history entry), so back/forward walk through them.
 */
export class FilterBar {
  readonly element: HTMLElement;
  private readonly range: HTMLSelectElement;
  private readonly custom: HTMLElement;
  private readonly from: HTMLInputElement;
  private readonly to: HTMLInputElement;
  private readonly service: HTMLSelectElement;
  private readonly instance: HTMLSelectElement;
  private readonly client: HTMLSelectElement;
  private readonly group: HTMLSelectElement;
  private readonly groupField: HTMLElement;

  constructor(private readonly navigate: Context['navigate']) {
    const labelled = (text: string, control: HTMLElement, id: string): HTMLElement => {
      control.id = id;
      return h('div', { class: 'field' }, h('label', { for: id }, text), control);
    };
    this.range = h(
      'select',
      null,
      ...RANGES.map((key) =>
        h('option', { value: key }, { '15m': 'Last 15 min', '1h': 'Last hour', '24h': 'Last 24 h', '7d': 'Last 7 days', custom: 'Custom…' }[key]),
      ),
    );
    this.from = h('input', { type: 'datetime-local', step: 60 });
    this.to = h('input', { type: 'datetime-local', step: 60 });
    const apply = h('button', { type: 'button' }, 'Apply');
    this.custom = h('div', { class: 'custom-range', hidden: true }, labelled('From', this.from, 'filter-from'), labelled('To', this.to, 'filter-to'), apply);
    this.service = h('select');
    this.instance = h('select');
    this.client = h('select');
    this.group = h(
      'select',
      null,
      h('option', { value: 'client' }, 'client name'),
      h('option', { value: 'client_version' }, 'name@version'),
      h('option', { value: 'service' }, 'service'),
      h('option', { value: 'instance' }, 'instance'),
    );
    this.groupField = labelled('Rows by', this.group, 'filter-group');
    this.element = h(
      'form',
      { class: 'filters', 'aria-label': 'Filters' },
      labelled('Time range', this.range, 'filter-range'),
      this.custom,
      labelled('Service', this.service, 'filter-service'),
      labelled('Instance', this.instance, 'filter-instance'),
      labelled('Client', this.client, 'filter-client'),
      this.groupField,
    );
    this.element.addEventListener('submit', (event) => event.preventDefault());
    this.range.addEventListener('change', () => {
      if (this.range.value !== 'custom') {
        navigate({ range: this.range.value as State['range'], from: '', to: '' });
        return;
      }
      this.custom.hidden = false;
      const now = Date.now();
      if (this.from.value === '') this.from.value = local(now - 86_400_000);
      if (this.to.value === '') this.to.value = local(now);
      this.from.focus();
    });
    apply.addEventListener('click', () => {
      const fromMs = Date.parse(this.from.value);
      const toMs = Date.parse(this.to.value);
      if (Number.isNaN(fromMs) || Number.isNaN(toMs) || fromMs >= toMs) {
        this.from.setCustomValidity('From must be a time before To.');
        this.from.reportValidity();
        return;
      }
      this.from.setCustomValidity('');
      navigate({ range: 'custom', from: new Date(fromMs).toISOString(), to: new Date(toMs).toISOString() });
    });
    this.service.addEventListener('change', () => navigate({ service: this.service.value, instance: '' }));
    this.instance.addEventListener('change', () => navigate({ instance: this.instance.value }));
    this.client.addEventListener('change', () => navigate({ client: this.client.value }));
    this.group.addEventListener('change', () => navigate({ group: this.group.value as State['group'] }));
  }

  /**
   * Sets the controls from the state, and fills the choices from what the collector has seen. `rowsBy`: the
   * groupings the view follows; "Rows by" is shown only on a view that follows some, offering only those.
   */
  async update(context: Context, clientNames: Promise<string[]> | undefined, rowsBy: readonly Group[] = []): Promise<void> {
    const { state } = context;
    this.range.value = state.range;
    this.custom.hidden = state.range !== 'custom';
    if (state.range === 'custom') {
      const { fromMs, toMs } = absoluteRange(state);
      this.from.value = local(fromMs);
      this.to.value = local(toMs);
    }
    this.group.value = state.group;
    this.groupField.hidden = rowsBy.length === 0;
    for (const option of this.group.options) option.disabled = !rowsBy.includes(option.value as Group);
    this.client.disabled = clientNames === undefined;
    // Ended instances too (sessions, say): their requests are in the matrix, so they are theirs to filter by.
    const [instances, names] = await Promise.all([
      context.load<InstancesResponse>('instances', { ended: 'true' }).then(
        (page) => page.instances,
        (): InstanceView[] => [],
      ),
      (clientNames ?? Promise.resolve([])).catch(() => []),
    ]);
    const services = [...new Set(instances.map((instance) => instance.service).filter((name): name is string => name !== null))].sort();
    const ids = instances
      .filter((instance) => state.service === '' || instance.service === state.service)
      .map((instance) => instance.instanceId)
      .filter((id): id is string => id !== null)
      .sort();
    fill(this.service, 'All services', services, state.service);
    fill(this.instance, 'All instances', ids, state.instance);
    fill(this.client, 'All clients', names, state.client);
  }
}

function fill(select: HTMLSelectElement, all: string, values: string[], selected: string): void {
  const key = JSON.stringify([values, selected]);
  if (select.dataset['filled'] === key) return;
  select.dataset['filled'] = key;
  const options = [h('option', { value: '' }, all), ...values.map((value) => h('option', { value }, value))];
  // A value in the URL that is not (or no longer) seen stays selectable, so the view says what it filters on.
  if (selected !== '' && !values.includes(selected)) options.push(h('option', { value: selected }, `${selected} (not seen)`));
  replace(select, options);
  select.value = selected;
}

/** A datetime-local value in the browser's time zone. */
function local(ms: number): string {
  const date = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return date.toISOString().slice(0, 16);
}
