/**
 * A receiver URL that reaches the collector itself: each notification would be POSTed to its own receiver or
 * API, refused there, and retried, for nothing (and, on a shared database, the delivery log fills with it). Such a
 * configuration is refused: at load when the port is configured, once the server listens when it is 0.
 */
import { networkInterfaces } from 'node:os';
import { ConfigError } from '../../model/errors.js';
import type { DeliveryConfig } from './config.js';

const bare = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host).toLowerCase();
const isWildcard = (host: string): boolean => host === '0.0.0.0' || host === '::' || host === '';
const isLoopback = (host: string): boolean => host === 'localhost' || host === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** This machine's interface addresses: what a collector listening on 0.0.0.0 or :: is reached at. */
function localAddresses(): Set<string> {
  return new Set(Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address.toLowerCase())));
}

/** Whether `url` names the collector listening on `host`:`port` (by its address; a DNS name other than localhost is not resolved). */
export function reachesCollector(url: string, host: string, port: number): boolean {
  const target = new URL(url);
  const targetPort = target.port === '' ? (target.protocol === 'https:' ? 443 : 80) : Number(target.port);
  if (targetPort !== port) return false;
  const to = bare(target.hostname);
  const listening = bare(host);
  if (to === listening) return true;
  if (isLoopback(to)) return isLoopback(listening) || isWildcard(listening);
  return isWildcard(listening) && (isWildcard(to) || localAddresses().has(to));
}

/** Throws {@link ConfigError} when a webhook or Alertmanager URL reaches the collector on `host`:`port`. */
export function refuseOwnAddress(delivery: DeliveryConfig, host: string, port: number): void {
  const receivers: [string, string][] = [
    ...(delivery.webhook === undefined ? [] : [['EXTSCOPE_WEBHOOK_URL', delivery.webhook.url] as [string, string]]),
    ...delivery.alertmanagerUrls.map((url): [string, string] => ['EXTSCOPE_ALERTMANAGER_URL', url]),
  ];
  for (const [name, url] of receivers) {
    if (reachesCollector(url, host, port)) {
      throw new ConfigError(
        `${name} ${JSON.stringify(url)} is this collector's own address (${host}:${port}): notifications would be sent to the collector itself; point it at the receiver`,
      );
    }
  }
}
