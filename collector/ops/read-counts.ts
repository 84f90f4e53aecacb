import { Counter, Gauge, type Registry } from 'prom-client';

/** A count the collector reads from where it is kept (the store, the id limit) when scraped. */
export interface ReadCount {
  /** Without `_total`: the counter is `<name>_total`, the deprecated gauge `<name>`. */
  name: string;
  help: string;
  read: () => number | Promise<number>;
}

/**
 * Counts that only grow, read when scraped, as counters named `<name>_total`, so that `increase()` and `rate()` take
 * a collector restart for the counter reset it is. Each is also exposed under its former name, `<name>` as a gauge,
 * for one release (deprecated, see docs/prometheus.md), so that existing alert rules and dashboards keep working
 * while they move to the counter.
 */
export function registerReadCounts(registry: Registry, counts: readonly ReadCount[]): void {
  const registers = [registry];
  for (const { name, help, read } of counts) {
    new Counter({
      name: `${name}_total`,
      help,
      registers,
      async collect() {
        const value = await read();
        this.reset();
        this.inc(value);
      },
    });
    new Gauge({
      name,
      help: `Deprecated, removed in the next release: use ${name}_total. ${help}`,
      registers,
      async collect() {
        this.set(await read());
      },
    });
  }
}
