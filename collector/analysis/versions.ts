import { compareBuild, parse } from 'semver';

/**
 * Client versions: which of two is newer, and what a step from one version to the next shows. The
 * `client_regression` rule and What changed both judge a client's newest version against the one before it, here.
 */

/** Part by part, numbers as numbers (`1.10` after `1.9`): the order of versions that are not semver. */
const byParts = new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).compare;

/**
 * Orders two client versions, oldest first:
 * - both semver (a leading `v` and surrounding spaces accepted): by semver precedence, so `1.10.0-rc.1` comes
 *   before `1.10.0`, and both after `1.9.0`; build metadata orders versions of equal precedence;
 * - neither semver (`1.2`, `2024.01.15`, `1.2.0.1`, `nightly`): part by part, numbers as numbers;
 * - one of each: the one that is not semver first (a client that moved to semver moved forward).
 * What is still equal (`1.2.0` and `v1.2.0`) is ordered by its text, so that the order is total and the same
 * wherever it is taken.
 */
export function compareVersions(a: string, b: string): number {
  const semverA = parse(a);
  const semverB = parse(b);
  let order: number;
  if (semverA !== null && semverB !== null) order = compareBuild(semverA, semverB);
  else if (semverA === null && semverB === null) order = byParts(a, b);
  else order = semverA === null ? -1 : 1;
  return order !== 0 ? order : a < b ? -1 : a > b ? 1 : 0;
}

/** A client's newest version and the one before it (undefined: fewer than two versions). */
export function lastTwo<Version>(versions: readonly Version[], versionOf: (version: Version) => string): [previous: Version, newest: Version] | undefined {
  if (versions.length < 2) return undefined;
  const [previous, newest] = [...versions].sort((a, b) => compareVersions(versionOf(a), versionOf(b))).slice(-2);
  return previous === undefined || newest === undefined ? undefined : [previous, newest];
}

/** One client version's requests, and those of them that declared one extension id. */
export interface Declarations {
  requests: number;
  declared: number;
}

/**
 * Whether a client's newest version stopped or started declaring an id its previous version did (not), with
 * `minRequests` of evidence on both sides: `stopped` when the previous version declared it on at least
 * `minRequests` requests and the newest on none of at least `minRequests` requests; `started` the reverse. One
 * stray request of either version shows nothing.
 */
export function declarationChange(previous: Declarations, newest: Declarations, minRequests: number): 'stopped' | 'started' | undefined {
  // Declared on no request is not declared, whatever the minimum.
  const declaring = Math.max(1, minRequests);
  if (previous.declared >= declaring && newest.declared === 0 && newest.requests >= minRequests) return 'stopped';
  if (newest.declared >= declaring && previous.declared === 0 && previous.requests >= minRequests) return 'started';
  return undefined;
}
