import type { Group } from '../../lib/state.js';

/**
 * What a row is, per grouping: the corner heading, the noun for counts and messages, and an example for the row
 * filter (none where no name is common to every fleet).
 */
export const ROWS: Record<Group, { heading: string; one: string; many: string; example: string }> = {
  client: { heading: 'Client', one: 'client', many: 'clients', example: 'e.g. claude' },
  client_version: { heading: 'Client', one: 'client', many: 'clients', example: 'e.g. claude@1.2' },
  service: { heading: 'Service', one: 'service', many: 'services', example: '' },
  instance: { heading: 'Instance', one: 'instance', many: 'instances', example: '' },
};
