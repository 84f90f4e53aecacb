/** One id a member advertises now, with its settings fingerprints (sorted). */
export interface AdvertisedId {
  id: string;
  fingerprints: readonly string[];
}

/**
 * Where a live instance stands within its service: with the `majority` (the one advertisement set more live
 * instances advertise than any other), in a `minority` against it, or one side of a `split` (two or more sets tie
 * for the most instances: there is no majority to be wrong against, so every side is shown).
 */
type DriftRole = 'majority' | 'minority' | 'split';

export interface Drift {
  role: DriftRole;
  /** Ids the majority advertises and this one does not (split: ids another side advertises and this one does not). */
  lacks: string[];
  /** Ids this one advertises and the majority does not (empty on a split: the other sides lack them). */
  extra: string[];
  /** Ids advertised by both with other settings fingerprints. */
  settingsDiffer: string[];
  /** How many live members share this set, and how many there are. */
  members: number;
  live: number;
}

/** One advertisement set of a service, its members and where it stands. */
export interface DriftGroup<T> {
  members: T[];
  drift: Drift;
}

const fingerprintsOf = (advertised: readonly AdvertisedId[]): Map<string, string> =>
  new Map(advertised.map((entry) => [entry.id, [...entry.fingerprints].sort().join(',')]));

/**
 * The odd one out of a service's live members (instances or builds), decided once for the Fleet view, the API and
 * the skew alert: members are grouped by what they advertise (ids and settings); when one set has strictly more
 * members than every other, it is the majority and each other set is a minority, told by what it lacks, adds or
 * sets differently; a tie for the most members is a split. Empty when all members advertise the same.
 */
export function oddOneOut<T>(members: readonly T[], advertised: (member: T) => readonly AdvertisedId[]): DriftGroup<T>[] {
  const bySignature = new Map<string, { members: T[]; ids: Map<string, string> }>();
  for (const member of members) {
    const ids = fingerprintsOf(advertised(member));
    const signature = [...ids]
      .map(([id, prints]) => `${id}=${prints}`)
      .sort()
      .join('\n');
    let group = bySignature.get(signature);
    if (group === undefined) bySignature.set(signature, (group = { members: [], ids }));
    group.members.push(member);
  }
  if (bySignature.size < 2) return [];
  const groups = [...bySignature.values()].sort((a, b) => b.members.length - a.members.length);
  const [first, second] = groups as [(typeof groups)[number], (typeof groups)[number]];
  const majority = first.members.length > second.members.length ? first : undefined;
  const live = members.length;
  return groups.map((group) => {
    const others = majority === undefined ? groups.filter((other) => other !== group) : group === majority ? [] : [majority];
    const lacks = new Set<string>();
    const extra = new Set<string>();
    const settingsDiffer = new Set<string>();
    for (const other of others) {
      for (const [id, prints] of other.ids) {
        const own = group.ids.get(id);
        if (own === undefined) lacks.add(id);
        else if (own !== prints) settingsDiffer.add(id);
      }
      if (majority !== undefined) for (const id of group.ids.keys()) if (!other.ids.has(id)) extra.add(id);
    }
    const role: DriftRole = majority === undefined ? 'split' : group === majority ? 'majority' : 'minority';
    return {
      members: group.members,
      drift: { role, lacks: [...lacks].sort(), extra: [...extra].sort(), settingsDiffer: [...settingsDiffer].sort(), members: group.members.length, live },
    };
  });
}
