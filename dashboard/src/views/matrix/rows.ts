import type { Group } from '../../lib/state.js';

/** What a row is, per grouping: the corner heading, and the noun for counts and messages. */
export const ROWS: Record<Group, { heading: string; one: string; many: string }> = {
  client: { heading: 'Client', one: 'client', many: 'clients' },
  client_version: { heading: 'Client', one: 'client', many: 'clients' },
  service: { heading: 'Service', one: 'service', many: 'services' },
  instance: { heading: 'Instance', one: 'instance', many: 'instances' },
};
