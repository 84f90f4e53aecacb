/**
 * Where alert notifications go and how hard delivery tries. Receivers are configured by environment variables
 * (see {@link DELIVERY_ENVIRONMENT}) or, in process, by {@link DeliveryOptions}; nothing is sent when none is set.
 */
import type { EnvironmentVariable } from '../../environment.js';
import { ConfigError } from '../../model/errors.js';
import { MS_PER_MINUTE, MS_PER_SECOND } from '../../model/time.js';

export interface RetryPolicy {
  /** Wait before the first retry; each further retry waits twice as long (with jitter), up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** Attempts per notification, the first included; then it is given up (`failed` in the delivery log). */
  maxAttempts: number;
}

export interface DeliveryOptions {
  /** Base URL of the dashboard as receivers reach it (links in webhooks, Alertmanager's `generatorURL`). Default: the collector's own address. */
  publicUrl?: string;
  /** Webhook receiver: each transition is POSTed here, signed with `webhookSecret`. */
  webhookUrl?: string;
  webhookSecret?: string;
  /** Alertmanager base URLs (`http://alertmanager:9093`); every one gets every alert, as Prometheus does with an HA pair. */
  alertmanagerUrls?: string[];
  /** Firing alerts are re-sent this often; keep it well below Alertmanager's `resolve_timeout` (5 min by default). */
  alertmanagerResendMs?: number;
  retry?: Partial<RetryPolicy>;
  /** Webhook notifications waiting (for a first attempt or a retry); past this the oldest is dropped and counted. */
  queueCapacity?: number;
  /** Requests to one receiver at once. */
  concurrency?: number;
  /** One attempt gives up after this long (connect, send, answer). */
  requestTimeoutMs?: number;
}

export interface WebhookConfig {
  url: string;
  secret: string;
}

export interface DeliveryConfig {
  publicUrl: string | undefined;
  webhook: WebhookConfig | undefined;
  alertmanagerUrls: string[];
  alertmanagerResendMs: number;
  retry: RetryPolicy;
  queueCapacity: number;
  concurrency: number;
  requestTimeoutMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { initialDelayMs: MS_PER_SECOND, maxDelayMs: 5 * MS_PER_MINUTE, maxAttempts: 10 };
const DEFAULT_ALERTMANAGER_RESEND_MS = MS_PER_MINUTE;
const DEFAULT_QUEUE_CAPACITY = 1000;
const DEFAULT_CONCURRENCY = 2;
const DEFAULT_REQUEST_TIMEOUT_MS = 10 * MS_PER_SECOND;
/** How long closing waits for requests in flight (a receiver that hangs must not hold up shutdown). */
export const CLOSE_GRACE_MS = 2 * MS_PER_SECOND;
/** A signing secret shorter than this is refused: a receiver trusts what it verifies. */
const MIN_WEBHOOK_SECRET_LENGTH = 16;

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http:// or https:// URL (got ${JSON.stringify(value)})`);
  return value;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new ConfigError(`${name} must be a positive integer (got ${String(value)})`);
  return value;
}

export function resolveDeliveryConfig(options: DeliveryOptions = {}): DeliveryConfig {
  const retry = { ...DEFAULT_RETRY, ...options.retry };
  for (const [name, value] of Object.entries(retry))
    positiveInteger(name === 'maxAttempts' ? 'retry.maxAttempts (EXTSCOPE_DELIVERY_MAX_ATTEMPTS)' : `retry.${name}`, value);
  if (retry.maxDelayMs < retry.initialDelayMs) throw new ConfigError('delivery.retry.maxDelayMs must be at least delivery.retry.initialDelayMs');
  let webhook: WebhookConfig | undefined;
  if (options.webhookUrl !== undefined && options.webhookUrl !== '') {
    const secret = options.webhookSecret ?? '';
    if (secret.length < MIN_WEBHOOK_SECRET_LENGTH) {
      throw new ConfigError(
        `EXTSCOPE_WEBHOOK_SECRET must be set to at least ${MIN_WEBHOOK_SECRET_LENGTH} characters when EXTSCOPE_WEBHOOK_URL is: ` +
          'receivers verify the signature made with it (e.g. `openssl rand -hex 32`)',
      );
    }
    webhook = { url: httpUrl('EXTSCOPE_WEBHOOK_URL', options.webhookUrl), secret };
  }
  const publicUrl = options.publicUrl === undefined || options.publicUrl === '' ? undefined : httpUrl('EXTSCOPE_PUBLIC_URL', options.publicUrl);
  return {
    publicUrl,
    webhook,
    alertmanagerUrls: (options.alertmanagerUrls ?? []).map((url) => httpUrl('EXTSCOPE_ALERTMANAGER_URL', url)),
    alertmanagerResendMs: positiveInteger(
      'alertmanagerResendMs (EXTSCOPE_ALERTMANAGER_RESEND_SECONDS × 1000)',
      options.alertmanagerResendMs ?? DEFAULT_ALERTMANAGER_RESEND_MS,
    ),
    retry,
    queueCapacity: positiveInteger('delivery.queueCapacity', options.queueCapacity ?? DEFAULT_QUEUE_CAPACITY),
    concurrency: positiveInteger('delivery.concurrency', options.concurrency ?? DEFAULT_CONCURRENCY),
    requestTimeoutMs: positiveInteger('delivery.requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
  };
}

/** The part of the collector's options these variables set. */
interface WithDelivery {
  delivery?: DeliveryOptions | undefined;
}

const set = (options: WithDelivery, delivery: DeliveryOptions): void => {
  options.delivery = { ...options.delivery, ...delivery };
};

/** The delivery part of the CLI's environment (listed in its help). */
export const DELIVERY_ENVIRONMENT: readonly EnvironmentVariable<WithDelivery>[] = [
  {
    name: 'EXTSCOPE_PUBLIC_URL',
    help: 'Dashboard base URL as alert receivers reach it (links in notifications)',
    apply: (options, value) => set(options, { publicUrl: value }),
  },
  {
    name: 'EXTSCOPE_WEBHOOK_URL',
    help: 'POST every alert transition here (signed JSON, see docs/alerting-delivery.md)',
    apply: (options, value) => set(options, { webhookUrl: value }),
  },
  {
    name: 'EXTSCOPE_WEBHOOK_SECRET',
    help: 'HMAC-SHA256 key for X-Extscope-Signature (required with EXTSCOPE_WEBHOOK_URL)',
    apply: (options, value) => set(options, { webhookSecret: value }),
  },
  {
    name: 'EXTSCOPE_ALERTMANAGER_URL',
    help: 'Prometheus Alertmanager base URL(s), comma-separated',
    apply: (options, value) =>
      set(options, {
        alertmanagerUrls: value
          .split(',')
          .map((url) => url.trim())
          .filter((url) => url !== ''),
      }),
  },
  {
    name: 'EXTSCOPE_ALERTMANAGER_RESEND_SECONDS',
    help: 'Re-send firing alerts to Alertmanager this often',
    default: DEFAULT_ALERTMANAGER_RESEND_MS / MS_PER_SECOND,
    apply: (options, value) => set(options, { alertmanagerResendMs: Math.round(Number(value) * MS_PER_SECOND) }),
  },
  {
    name: 'EXTSCOPE_DELIVERY_MAX_ATTEMPTS',
    help: 'Attempts per webhook notification before it is given up',
    default: DEFAULT_RETRY.maxAttempts,
    apply: (options, value) => set(options, { retry: { ...options.delivery?.retry, maxAttempts: Number(value) } }),
  },
];
