/**
 * The compose profile for replicas cannot be run here (no Docker engine); this checks its wiring: PostgreSQL,
 * two collectors that take the database from EXTSCOPE_DB (no --db flag, which would win), nginx with the
 * repository's config in front of exactly those collectors, on the OTLP port.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from '../support/processes.js';

interface Service {
  profiles?: string[];
  command?: string[];
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, unknown> | string[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as { services: Record<string, Service> };
const nginxConf = readFileSync(join(ROOT, 'deploy', 'nginx.conf'), 'utf8');

describe('docker compose profile "postgres"', () => {
  it('runs PostgreSQL, two collector replicas on it and nginx in front, all in the profile', () => {
    const inProfile = Object.entries(compose.services)
      .filter(([, service]) => service.profiles?.includes('postgres'))
      .map(([name]) => name);
    expect(inProfile.sort()).toEqual(['collector-1', 'collector-2', 'nginx', 'postgres']);
    for (const name of ['collector-1', 'collector-2']) {
      const replica = compose.services[name] as Service;
      expect(replica.command).not.toContain('--db');
      expect(replica.environment?.['EXTSCOPE_DB']).toMatch(/^postgres:\/\/extscope@postgres:5432\/extscope$/);
      expect(replica.environment?.['PGPASSWORD']).toContain('EXTSCOPE_PG_PASSWORD:?');
      expect(replica.depends_on).toHaveProperty('postgres');
    }
    const nginx = compose.services['nginx'] as Service;
    expect(nginx.ports).toEqual(['4318:4318']);
    expect(nginx.volumes).toContain('./deploy/nginx.conf:/etc/nginx/nginx.conf:ro');
  });

  it('nginx balances round-robin over both replicas, without stickiness, and passes failed exports on', () => {
    const upstream = /upstream extscope \{([^}]*)\}/.exec(nginxConf)?.[1] ?? '';
    // max_fails=0: a replica's 503 (saturated, draining) never marks it down, so that 503 + Retry-After reaches the sender.
    expect(upstream.match(/server collector-\d:4318 max_fails=0;/g)).toEqual(['server collector-1:4318 max_fails=0;', 'server collector-2:4318 max_fails=0;']);
    expect(upstream).not.toMatch(/ip_hash|hash |sticky|least_conn/);
    expect(nginxConf).toMatch(/proxy_next_upstream error timeout http_502 http_503 non_idempotent;/);
    expect(nginxConf).toMatch(/listen 4318;/);
  });
});
