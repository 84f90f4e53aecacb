/**
 * Client versions in order (analysis/versions.ts), one case per ordering rule, and the evidence a step from one
 * version to the next needs, as the client_regression rule and What changed (analysis/changes.ts) both judge it.
 */
import { describe, expect, it } from 'vitest';
import { compareMatrices } from '../../../collector/analysis/changes.js';
import { buildMatrix } from '../../../collector/analysis/matrix.js';
import { compareVersions, declarationChange, lastTwo } from '../../../collector/analysis/versions.js';
import { SeriesKind } from '../../../collector/model/batches.js';
import type { CellTotal } from '../../../collector/model/records.js';

const sorted = (versions: readonly string[]): string[] => [...versions].sort(compareVersions);

describe('client versions in order', () => {
  it('semver: numbers as numbers, major before minor before patch', () => {
    expect(sorted(['1.10.0', '2.0.0', '1.9.0', '1.9.10', '1.9.2'])).toEqual(['1.9.0', '1.9.2', '1.9.10', '1.10.0', '2.0.0']);
  });

  it('semver: a pre-release comes before its release, and after the release before it', () => {
    expect(sorted(['1.10.0', '1.10.0-rc.1', '1.9.0'])).toEqual(['1.9.0', '1.10.0-rc.1', '1.10.0']);
  });

  it('semver: pre-releases in semver precedence (identifiers compared one by one, numeric ones as numbers)', () => {
    expect(sorted(['1.0.0-rc.10', '1.0.0-beta', '1.0.0-rc.2', '1.0.0-alpha.1', '1.0.0-alpha'])).toEqual([
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-beta',
      '1.0.0-rc.2',
      '1.0.0-rc.10',
    ]);
  });

  it('semver: a leading v is accepted (v1.2.0 is 1.2.0, before 1.10.0)', () => {
    expect(sorted(['1.10.0', 'v1.2.0', 'v1.9.0'])).toEqual(['v1.2.0', 'v1.9.0', '1.10.0']);
  });

  it('semver: build metadata orders versions of equal precedence, and the text what is still equal', () => {
    expect(sorted(['1.2.0+build.2', '1.2.0', '1.2.0+build.1'])).toEqual(['1.2.0', '1.2.0+build.1', '1.2.0+build.2']);
    expect(sorted(['v1.2.0', '1.2.0'])).toEqual(['1.2.0', 'v1.2.0']);
    expect(compareVersions('1.2.0', '1.2.0')).toBe(0);
  });

  it('not semver: part by part, numbers as numbers', () => {
    expect(sorted(['1.10', '1.9', '2024.01.15', '2023.12'])).toEqual(['1.9', '1.10', '2023.12', '2024.01.15']);
    expect(sorted(['build-10', 'build-9'])).toEqual(['build-9', 'build-10']);
  });

  it('one of each: the version that is not semver comes first', () => {
    expect(sorted(['1.0.0', '9.9', 'nightly', '0.1.0'])).toEqual(['9.9', 'nightly', '0.1.0', '1.0.0']);
  });

  it('is a total order: every shuffle of a mixed list sorts the same', () => {
    const versions = ['1.10.0-rc.1', '1.10.0', '1.10.0.5', 'v1.9.0', '1.9', 'nightly', '1.0.0+b', '1.0.0', '1.10.0-rc'];
    const once = sorted(versions);
    for (let seed = 1; seed <= 50; seed++) {
      const shuffled = [...versions].sort((a, b) => ((a.length * 31 + seed * b.charCodeAt(0)) % 7) - 3);
      expect(sorted(shuffled)).toEqual(once);
    }
  });

  it('lastTwo: the newest version and the one before it, whatever order they arrive in', () => {
    expect(lastTwo(['1.10.0', '1.10.0-rc.1', '1.9.0'], (version) => version)).toEqual(['1.10.0-rc.1', '1.10.0']);
    expect(lastTwo(['1.0.0'], (version) => version)).toBeUndefined();
  });
});

describe('a version step needs evidence on both sides', () => {
  it('stopped: the previous version declared on at least the minimum, the newest on none of at least the minimum', () => {
    expect(declarationChange({ requests: 10, declared: 10 }, { requests: 10, declared: 0 }, 10)).toBe('stopped');
    expect(declarationChange({ requests: 10, declared: 9 }, { requests: 10, declared: 0 }, 10)).toBeUndefined();
    expect(declarationChange({ requests: 10, declared: 10 }, { requests: 9, declared: 0 }, 10)).toBeUndefined();
    expect(declarationChange({ requests: 10, declared: 10 }, { requests: 10, declared: 1 }, 10)).toBeUndefined();
  });

  it('started: the reverse', () => {
    expect(declarationChange({ requests: 5, declared: 0 }, { requests: 5, declared: 5 }, 5)).toBe('started');
    expect(declarationChange({ requests: 4, declared: 0 }, { requests: 5, declared: 5 }, 5)).toBeUndefined();
  });

  it('a minimum of 0 still needs one declaring request: nothing declared on either side is no change', () => {
    expect(declarationChange({ requests: 0, declared: 0 }, { requests: 0, declared: 0 }, 0)).toBeUndefined();
    expect(declarationChange({ requests: 1, declared: 1 }, { requests: 0, declared: 0 }, 0)).toBe('stopped');
  });
});

const TASKS = 'io.modelcontextprotocol/tasks';

/** One client version's requests, `declared` of them declaring {@link TASKS}. */
function version(name: string, clientVersion: string, requests: number, declared: number): CellTotal[] {
  const base = { clientName: name, clientVersion, count: 0 };
  const cells: CellTotal[] = [
    {
      ...base,
      kind: SeriesKind.Requests,
      clientDeclaration: 'declared',
      extensionId: null,
      clientDeclared: null,
      serverDeclared: null,
      negotiated: null,
      count: requests,
    },
  ];
  if (declared > 0)
    cells.push({
      ...base,
      kind: SeriesKind.Extension,
      clientDeclaration: null,
      extensionId: TASKS,
      clientDeclared: true,
      serverDeclared: true,
      negotiated: true,
      count: declared,
    });
  if (declared < requests)
    cells.push({
      ...base,
      kind: SeriesKind.Extension,
      clientDeclaration: null,
      extensionId: TASKS,
      clientDeclared: false,
      serverDeclared: true,
      negotiated: false,
      count: requests - declared,
    });
  return cells;
}
const view = (...cells: CellTotal[][]) => buildMatrix(cells.flat(), 'client_version');
const declaring = (changes: ReturnType<typeof compareMatrices>) =>
  changes.filter((change) => change.kind !== 'share_moved').map((change) => `${change.kind} ${change.subject} (after ${change.previous ?? '?'})`);

describe('What changed, by version', () => {
  it('a pre-release between two releases that declare an id is not a regression of the release', () => {
    const before = view(version('probe-app', '1.9.0', 20, 20), version('probe-app', '1.10.0-rc.1', 20, 0));
    const after = view(version('probe-app', '1.10.0', 20, 20));
    // 1.10.0 is newer than its release candidate: it started declaring tasks again, it did not stop.
    expect(declaring(compareMatrices(before, after, 5))).toEqual(['started_declaring probe-app@1.10.0 (after probe-app@1.10.0-rc.1)']);
  });

  it('a release that no longer declares what the one before did is listed', () => {
    const before = view(version('probe-app', '1.9.0', 20, 20));
    const after = view(version('probe-app', '1.10.0', 20, 0));
    expect(declaring(compareMatrices(before, after, 5))).toEqual(['stopped_declaring probe-app@1.10.0 (after probe-app@1.9.0)']);
  });

  it('one declaring request of the previous version is not evidence (default minimum 5), and the minimum is a parameter', () => {
    const before = view(version('notes-app', '2.7.1', 40, 1));
    const after = view(version('notes-app', '3.0.0', 40, 0));
    expect(declaring(compareMatrices(before, after, 5))).toEqual([]);
    expect(declaring(compareMatrices(before, after, 5, 1))).toEqual(['stopped_declaring notes-app@3.0.0 (after notes-app@2.7.1)']);
  });
});
