import type { DeliveryEntry, DeliveryLogStore } from '../../store/store.js';

/** What delivery counts, per receiver: `retried` once per retry scheduled, the others once per notification. */
export type DeliveryResult = 'sent' | 'failed' | 'retried' | 'dropped';

/** Counters on /metrics (the collector's SelfMetrics implements it). */
export interface DeliveryTelemetry {
  deliveryCounted(receiver: string, result: DeliveryResult): void;
}

export interface DeliveryDependencies {
  /** The delivery log; written after each step, never waited on by a send. */
  log: Pick<DeliveryLogStore, 'recordDelivery'>;
  telemetry?: DeliveryTelemetry | undefined;
  /** Base URL the dashboard links start with, asked at send time (the collector's own address is known only once it listens). */
  publicUrl: () => string;
  /** The clock: times in the delivery log, `endsAt` and alert times. */
  clock: () => number;
  /** Problems that do not stop delivery (the log could not be written, a receiver rejected a message). */
  warn: (message: string) => void;
}

/** Writes one delivery-log row; a failure (disk full) is reported once per burst, never thrown. */
export function logWriter(deps: DeliveryDependencies): (entry: DeliveryEntry) => void {
  let failing = false;
  return (entry) => {
    deps.log.recordDelivery(entry).then(
      () => (failing = false),
      (error: unknown) => {
        if (!failing) deps.warn(`alert delivery log: cannot write (${error instanceof Error ? error.message : String(error)}); notifications are still sent`);
        failing = true;
      },
    );
  };
}

/** `publicUrl` + the alert's dashboard path, whatever slashes each has. */
export function dashboardUrl(publicUrl: string, path: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
