/**
 * One lifecycle for every part the service builds (after the OpenTelemetry Collector's `component.Component`).
 * `start` runs once, in build order; `shutdown` runs in reverse order and must be safe to call more than once,
 * and also for a component whose `start` never ran or failed.
 */
export interface Component {
  start(): Promise<void>;
  shutdown(): Promise<void>;
}
