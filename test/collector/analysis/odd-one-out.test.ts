import { describe, expect, it } from 'vitest';
import { oddOneOut } from '../../../collector/analysis/odd-one-out.js';

const SEARCH = 'com.example/search';
const TASKS = 'io.modelcontextprotocol/tasks';

interface Member {
  name: string;
  ids: { id: string; fingerprints: string[] }[];
}
const member = (name: string, ...ids: (string | [string, string])[]): Member => ({
  name,
  ids: ids.map((entry) => (typeof entry === 'string' ? { id: entry, fingerprints: [] } : { id: entry[0], fingerprints: [entry[1]] })),
});
/** Each group as `names: role lacks/extra/settings members/live`. */
const shown = (members: Member[]): string[] =>
  oddOneOut(members, (one) => one.ids).map(
    ({ members: group, drift }) =>
      `${group.map((one) => one.name).join(',')}: ${drift.role} -${drift.lacks.join('+')} +${drift.extra.join('+')} ~${drift.settingsDiffer.join('+')} ${drift.members}/${drift.live}`,
  );

describe('the odd one out', () => {
  it('is nothing when every member advertises the same ids and settings, in any order', () => {
    expect(shown([member('a', TASKS, SEARCH), member('b', SEARCH, TASKS)])).toEqual([]);
  });

  it('names the minority against a strict majority: what it lacks, adds and sets differently; the majority lacks nothing', () => {
    expect(
      shown([
        member('a', TASKS, SEARCH),
        member('b', TASKS),
        member('c', TASKS, SEARCH),
        member('d', TASKS, SEARCH),
        member('e', [TASKS, 'x'], SEARCH, 'com.example/ui'),
      ]),
    ).toEqual([`a,c,d: majority - + ~ 3/5`, `b: minority -${SEARCH} + ~ 1/5`, `e: minority - +com.example/ui ~${TASKS} 1/5`]);
  });

  it('a tie for the most members is a split: each side is told what the other advertises and it does not, a superset side lacks nothing', () => {
    expect(shown([member('shop-a', TASKS, SEARCH), member('shop-b', TASKS)])).toEqual([`shop-a: split - + ~ 1/2`, `shop-b: split -${SEARCH} + ~ 1/2`]);
    expect(shown([member('a', [TASKS, 'x']), member('b', [TASKS, 'y']), member('c', [TASKS, 'x']), member('d', [TASKS, 'y'])])).toEqual([
      `a,c: split - + ~${TASKS} 2/4`,
      `b,d: split - + ~${TASKS} 2/4`,
    ]);
  });
});
