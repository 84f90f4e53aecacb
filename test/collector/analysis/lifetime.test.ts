/**
 * Sessions and long-lived instances over time: when a process counts as ended, stale or live, what the live
 * listing keeps, how builds count their sessions, and how long silences are said.
 */
import { describe, expect, it } from 'vitest';
import { fleetBuilds } from '../../../collector/analysis/builds.js';
import { SESSION_SILENCE_MS, buildFleet, listed } from '../../../collector/analysis/fleet.js';
import { buildKey } from '../../../collector/model/build.js';
import type { InstanceRecord } from '../../../collector/model/records.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, spokenDuration } from '../../../collector/model/time.js';

const NOW = Date.UTC(2026, 5, 1, 12);
const STALE_MS = 5 * MS_PER_MINUTE;

function record(instanceId: string, transport: 'stdio' | 'http' | null, lastSeenAgoMs: number, endedAgoMs: number | null = null): InstanceRecord {
  const identity = {
    service: 'shop',
    instanceId,
    serviceVersion: null,
    host: 'host-1',
    serverName: 'shop-server',
    serverVersion: transport === 'stdio' ? '1.0.0' : '2.0.0',
    transport,
    deploymentEnvironment: null,
    k8sNamespace: null,
    k8sDeployment: null,
  };
  return {
    ...identity,
    buildKey: buildKey(identity),
    firstSeenMs: NOW - MS_PER_HOUR,
    lastSeenMs: NOW - lastSeenAgoMs,
    endedMs: endedAgoMs === null ? null : NOW - endedAgoMs,
    endedSessions: null,
    advertisedMs: NOW - MS_PER_HOUR,
    advertised: [
      { serverName: 'shop-server', serverVersion: '1.0.0', extensionId: 'com.example/a', fingerprint: null, firstSeenMs: 0, lastSeenMs: 0, current: true },
    ],
    counts: [],
  };
}

describe('sessions and instances over time', () => {
  const records = [
    record('running-session', 'stdio', 30_000),
    record('ended-session', 'stdio', 10_000, 10_000),
    record('killed-session', 'stdio', SESSION_SILENCE_MS + 1),
    record('quiet-session', 'stdio', SESSION_SILENCE_MS),
    record('server', 'http', 30_000),
    record('silent-server', 'http', STALE_MS + 1),
    record('stopped-server', 'http', 20 * MS_PER_MINUTE, 20 * MS_PER_MINUTE),
  ];
  const fleet = buildFleet(records, NOW, STALE_MS);
  const byId = new Map(fleet.map((instance) => [instance.instanceId, instance]));

  it('a session ends with its last export, or when silent past two export intervals; a long-lived instance that falls silent is stale, not ended', () => {
    const state = (id: string): [boolean, boolean, boolean, number | null] => {
      const instance = byId.get(id)!;
      return [instance.session, instance.live, instance.stale, instance.endedMs === null ? null : NOW - instance.endedMs];
    };
    expect(state('running-session')).toEqual([true, true, false, null]);
    expect(state('ended-session')).toEqual([true, false, false, 10_000]);
    expect(state('killed-session')).toEqual([true, false, false, SESSION_SILENCE_MS + 1]);
    expect(state('quiet-session')).toEqual([true, true, false, null]);
    expect(state('server')).toEqual([false, true, false, null]);
    expect(state('silent-server')).toEqual([false, false, true, null]);
    expect(state('stopped-server')).toEqual([false, false, false, 20 * MS_PER_MINUTE]);
  });

  it('the live listing drops what ended at once; asked for, what ended within the retention is kept', () => {
    const ids = (list: readonly { instanceId: string | null }[]): (string | null)[] => list.map((instance) => instance.instanceId);
    expect(ids(listed(fleet, NOW, 0))).toEqual(['running-session', 'quiet-session', 'server', 'silent-server']);
    expect(ids(listed(fleet, NOW, 15 * MS_PER_MINUTE))).toEqual([
      'running-session',
      'ended-session',
      'killed-session',
      'quiet-session',
      'server',
      'silent-server',
    ]);
  });

  it('a build counts its live and total sessions and names its long-lived instances that have not ended', () => {
    const builds = fleetBuilds(fleet).map((build) => [build.label, build.liveSessions, build.sessions, build.instances.map((instance) => instance.instanceId)]);
    expect(builds).toEqual([
      ['shop-server@1.0.0 on host-1', 2, 4, []],
      ['shop-server@2.0.0 on host-1', 0, 0, ['server', 'silent-server']],
    ]);
  });

  it("a build's ended-sessions row adds the sessions it holds to the build's total, and is listed neither live nor as recently ended", () => {
    const folded = { ...record('ended sessions of shop-server@1.0.0 on host-1 (#0a1b2c3d)', 'stdio', 2 * MS_PER_HOUR, 2 * MS_PER_HOUR), endedSessions: 12 };
    const withFolded = buildFleet([...records, folded], NOW, STALE_MS);
    expect(fleetBuilds(withFolded).map((build) => [build.label, build.liveSessions, build.sessions])).toEqual([
      ['shop-server@1.0.0 on host-1', 2, 16],
      ['shop-server@2.0.0 on host-1', 0, 0],
    ]);
    expect(listed(withFolded, NOW, 15 * MS_PER_MINUTE).map((instance) => instance.instanceId)).not.toContain(folded.instanceId);
  });

  it('a silence is said in minutes up to two hours, then hours up to two days, then days', () => {
    expect([1, 11, 119].map((minutes) => spokenDuration(minutes * MS_PER_MINUTE))).toEqual(['1 minute', '11 minutes', '119 minutes']);
    expect([2, 26, 47].map((hours) => spokenDuration(hours * MS_PER_HOUR + 59 * MS_PER_MINUTE))).toEqual(['2 hours', '26 hours', '47 hours']);
    expect([2, 12].map((days) => spokenDuration(days * MS_PER_DAY + 23 * MS_PER_HOUR))).toEqual(['2 days', '12 days']);
  });
});
