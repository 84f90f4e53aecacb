/** The caps on the two dimensions a sender controls through its resource; both stores apply them alike. */
export interface ResourceLimits {
  /** Distinct service names kept; a new one past it is stored as `_OTHER`. */
  maxServices: number;
  /** Instances (service, instance id) kept; a new one past it is stored as the service's instance `_OTHER`. */
  maxInstances: number;
}
