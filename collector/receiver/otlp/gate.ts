import { BusyError, PermanentError, RateLimitedError, RetryableError } from '../../model/errors.js';
import type { Admission, Ticket } from './admission.js';

/** Failed authentications per client address (the service's AuthFailureLimit). */
export interface AuthFailures {
  /** Records a failure; the seconds to wait when the address is over its limit. */
  failed(address: string): number | undefined;
}

/** Checks the `Authorization` value of an export (an HTTP header, or gRPC metadata). */
export interface IngestToken {
  matches(authorization: string | undefined): boolean;
}

/** What every export passes before its body is read, whichever protocol carries it. */
export interface IngestGate {
  ingestToken: IngestToken | undefined;
  authFailures: AuthFailures | undefined;
  admission: Admission;
}

/**
 * The longest wait the receivers ask for (Retry-After, gRPC RetryInfo), whatever the failing stage asked for (the
 * store says 5 s). The OpenTelemetry JS exporters (otlp-exporter-base's retrying transport) wait exactly
 * Retry-After before retrying, but give up instead when that wait would end past the export's deadline; the
 * extscope agent's exports time out after 2 s (agent/register/sdk.ts), so anything above ~1.5 s means the agent
 * never retries and the export is lost. 1 s leaves room for one retry within the deadline; exporters with longer
 * timeouts (the spec's 10 s) simply retry more often, with their own backoff growing between attempts.
 */
export const MAX_RETRY_AFTER_SECONDS = 1;
const RETRY_AFTER_BUSY = 1;
const RETRY_AFTER_DRAINING = 1;

/**
 * The ingest token: throws what the sender is told (unauthenticated, rate-limited). Checked as soon as the
 * headers (HTTP) or the metadata (gRPC) arrive, before anything else is spent on the export.
 */
export function authenticate(gate: IngestGate, authorization: string | undefined, address: string): void {
  if (gate.ingestToken !== undefined && !gate.ingestToken.matches(authorization)) {
    const wait = gate.authFailures?.failed(address);
    // 429 (HTTP) or RESOURCE_EXHAUSTED with RetryInfo (gRPC).
    if (wait !== undefined) throw new RateLimitedError('too many failed authentication attempts from this address; retry later', 'auth_rate_limited', wait);
    throw new PermanentError('a valid bearer token (EXTSCOPE_INGEST_TOKEN) is required', 'unauthorized', 401);
  }
}

const refusal = (admission: Admission): Error =>
  admission.isDraining
    ? new RetryableError('the collector is shutting down', 'draining', RETRY_AFTER_DRAINING)
    : new BusyError('too many exports in progress; retry later', 'overloaded', RETRY_AFTER_BUSY);

/**
 * An export begins, once its headers (HTTP) or metadata (gRPC) are in and authenticated: throws what the sender is
 * told when every admission slot is taken or the collector is draining, before anything is read. The ticket holds no
 * slot yet ({@link admit} takes it once the export has arrived in full); the caller ends it on every path.
 */
export function begin(gate: Pick<IngestGate, 'admission'>): Ticket {
  const ticket = gate.admission.begin();
  if (ticket === undefined) throw refusal(gate.admission);
  return ticket;
}

/**
 * The export has arrived in full: takes its admission slot, or throws what the sender is told (overloaded). Taken
 * only now, so a sender that opens exports and never finishes them holds no slot, however often it reconnects.
 */
export function admit(gate: Pick<IngestGate, 'admission'>, ticket: Ticket): void {
  if (!ticket.enter()) throw refusal(gate.admission);
}
