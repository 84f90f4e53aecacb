/**
 * Alert delivery: the notifiers the rule engine hands each evaluation cycle to (webhooks, Prometheus
 * Alertmanager), built from the collector's configuration.
 */
import type { EvaluationCycle, Notifier } from '../../model/alerts.js';
import { AlertmanagerNotifier } from './alertmanager.js';
import type { DeliveryConfig } from './config.js';
import type { DeliveryDependencies } from './telemetry.js';
import { WebhookNotifier } from './webhook.js';

export { labelSet } from './alertmanager.js';
export type { DeliveryConfig } from './config.js';
export type { DeliveryDependencies } from './telemetry.js';
export { verifySignature } from './signature.js';
export type { WebhookBody } from './webhook-body.js';

/** Every configured receiver behind one notifier; none configured, a notifier that does nothing. */
export class Notifiers implements Notifier {
  readonly name = 'notifiers';
  private closing: Promise<void> | undefined;

  constructor(
    readonly receivers: readonly Notifier[],
    private readonly warn: (message: string) => void = () => undefined,
  ) {}

  deliver(cycle: EvaluationCycle): void {
    for (const receiver of this.receivers) {
      try {
        receiver.deliver(cycle);
      } catch (error) {
        // `deliver` is not supposed to throw; if one does, the others and the evaluation carry on.
        this.warn(`alert delivery to ${receiver.name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  async resume(): Promise<void> {
    await Promise.allSettled(this.receivers.map((receiver) => receiver.resume?.()));
  }

  /** Idempotent (the service and the rule engine may both close it). */
  close(): Promise<void> {
    this.closing ??= Promise.allSettled(this.receivers.map((receiver) => receiver.close())).then(() => undefined);
    return this.closing;
  }
}

/** Receiver names (the delivery log's `receiver`, the /metrics label): `webhook`, `alertmanager`, `alertmanager-2`, … */
export function buildNotifiers(config: DeliveryConfig, deps: DeliveryDependencies): Notifiers {
  const receivers: Notifier[] = [];
  if (config.webhook !== undefined) receivers.push(new WebhookNotifier('webhook', config.webhook, config, deps));
  config.alertmanagerUrls.forEach((url, index) =>
    receivers.push(new AlertmanagerNotifier(index === 0 ? 'alertmanager' : `alertmanager-${index + 1}`, url, config, deps)),
  );
  return new Notifiers(receivers, deps.warn);
}
