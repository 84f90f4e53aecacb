import { readFileSync } from 'node:fs';
import * as stable from '@opentelemetry/semantic-conventions';
import * as incubating from '@opentelemetry/semantic-conventions/incubating';
import { describe, expect, it } from 'vitest';
import * as contract from '../../contract/index.js';

describe('contract', () => {
  it('the contract page (docs/contract.md) is exactly what the tables render', () => {
    const readme = readFileSync(new URL('../../docs/contract.md', import.meta.url), 'utf8');
    const begin = readme.indexOf(contract.DOC_BEGIN);
    const end = readme.indexOf(contract.DOC_END);
    expect(begin).toBeGreaterThanOrEqual(0);
    expect(readme.slice(begin, end + contract.DOC_END.length)).toBe(contract.renderContract());
  });

  it('OpenTelemetry names equal the semantic-conventions package (stable and incubating)', () => {
    expect(contract.ATTR_SERVICE_NAME).toBe(stable.ATTR_SERVICE_NAME);
    expect(contract.ATTR_SERVICE_VERSION).toBe(stable.ATTR_SERVICE_VERSION);
    expect(contract.ATTR_SERVICE_INSTANCE_ID).toBe(stable.ATTR_SERVICE_INSTANCE_ID);
    expect(contract.ATTR_HOST_NAME).toBe(incubating.ATTR_HOST_NAME);
    expect(contract.ATTR_MCP_METHOD_NAME).toBe(incubating.ATTR_MCP_METHOD_NAME);
    expect(contract.ATTR_MCP_PROTOCOL_VERSION).toBe(incubating.ATTR_MCP_PROTOCOL_VERSION);
    expect(contract.ATTR_RPC_RESPONSE_STATUS_CODE).toBe(incubating.ATTR_RPC_RESPONSE_STATUS_CODE);
  });

  it('every extscope-owned name is under the extscope. prefix; no bare mcp.* name is invented', () => {
    const all = [
      ...contract.REQUEST_ATTRIBUTES,
      ...contract.EXTENSION_ATTRIBUTES,
      ...contract.ADVERTISED_ATTRIBUTES,
      ...contract.RESOURCE_ATTRIBUTES,
      ...contract.SPAN_ATTRIBUTES,
    ].map((attribute) => attribute.name);
    const otel = new Set<unknown>(Object.values({ ...stable, ...incubating }));
    for (const name of all) expect(name.startsWith('extscope.') || otel.has(name), name).toBe(true);
    for (const metric of Object.values(contract.METRICS)) expect(metric.name.startsWith('extscope.')).toBe(true);
  });

  it('keys and columns are unique within each table', () => {
    for (const table of [[...contract.REQUEST_ATTRIBUTES, ...contract.EXTENSION_ATTRIBUTES], contract.RESOURCE_ATTRIBUTES, contract.SPAN_ATTRIBUTES]) {
      expect(new Set(table.map((a) => a.key)).size).toBe(table.length);
      expect(new Set(table.map((a) => a.column)).size).toBe(table.length);
      expect(new Set(table.map((a) => a.name)).size).toBe(table.length);
    }
  });

  it('negotiated means declared by both, never under the invalid bucket', () => {
    expect(contract.isNegotiated('a/b', true, true)).toBe(true);
    expect(contract.isNegotiated('a/b', true, false)).toBe(false);
    expect(contract.isNegotiated('a/b', false, true)).toBe(false);
    expect(contract.isNegotiated(contract.INVALID_EXTENSION_ID, true, true)).toBe(false);
    expect(contract.intersect(['c/x', 'a/y', 'b/z'], new Set(['b/z', 'c/x', 'd/w']))).toEqual(['c/x', 'b/z']);
  });

  it('the id grammar takes prefixed ids up to the length limit and nothing else', () => {
    expect(contract.isValidExtensionId('io.modelcontextprotocol/tasks')).toBe(true);
    expect(contract.isValidExtensionId(`a/${'x'.repeat(contract.MAX_EXTENSION_ID_LENGTH - 2)}`)).toBe(true);
    expect(contract.isValidExtensionId(`a/${'x'.repeat(contract.MAX_EXTENSION_ID_LENGTH - 1)}`)).toBe(false);
    for (const id of ['tasks', '/tasks', 'io./x', '1a/b', 'a/-b', 'com.evil/<img src=x>']) expect(contract.isValidExtensionId(id), id).toBe(false);
  });
});
