import { createHash } from 'node:crypto';
import { ATTR_HOST_NAME, ATTR_SERVER_NAME, ATTR_SERVER_VERSION, ATTR_SERVICE_INSTANCE_ID, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION, INVALID_EXTENSION_ID, OVERFLOW_VALUE, isValidExtensionId } from '../../contract/index.js';
import type { KeyValue } from '../otlp/messages.js';
import { canonicalAttributes, scalarString } from './otlp-values.js';
import type { ResourceIdentity } from './points.js';
import { ExportRejection } from './rejection.js';

/** Checks the values of the contract that are client- or sender-controlled before anything keeps them. */
export class ContractValues {
  private readonly validIds = new Set<string>();

  constructor(private readonly maxLength: number) {}

  /** A kept string: refused outright when longer than the limit (a huge string is an attack, not data). */
  keep(where: string, attribute: string, value: string): string {
    if (value.length > this.maxLength) {
      throw new ExportRejection(
        `${where}: attribute ${attribute} is ${value.length} characters long; the limit is ${this.maxLength}`,
        'attribute_too_long',
      );
    }
    return value;
  }

  /**
   * An extension id as stored: grammar-valid ids as they are, the agent's two buckets as they are, anything
   * else counted under `_invalid` as the agent itself would (a sender that does not validate is not an error).
   */
  extensionId(id: string): string {
    if (this.validIds.has(id)) return id;
    if (id === INVALID_EXTENSION_ID || id === OVERFLOW_VALUE || isValidExtensionId(id)) {
      if (this.validIds.size > 100_000) this.validIds.clear();
      this.validIds.add(id);
      return id;
    }
    return INVALID_EXTENSION_ID;
  }

  resource(attributes: readonly KeyValue[], where: string): ResourceIdentity {
    const canonical = canonicalAttributes(attributes);
    const identity: ResourceIdentity = {
      service: null,
      instanceId: null,
      serviceVersion: null,
      host: null,
      serverName: null,
      serverVersion: null,
      canonical,
      key: createHash('sha256').update(canonical).digest('base64url').slice(0, 22),
    };
    for (const attribute of attributes) {
      const key = attribute.key;
      let field: keyof Omit<ResourceIdentity, 'canonical'> | undefined;
      if (key === ATTR_SERVICE_NAME) field = 'service';
      else if (key === ATTR_SERVICE_INSTANCE_ID) field = 'instanceId';
      else if (key === ATTR_SERVICE_VERSION) field = 'serviceVersion';
      else if (key === ATTR_HOST_NAME) field = 'host';
      else if (key === ATTR_SERVER_NAME) field = 'serverName';
      else if (key === ATTR_SERVER_VERSION) field = 'serverVersion';
      if (field === undefined) continue;
      const value = scalarString(attribute.value);
      if (value !== undefined) identity[field] = this.keep(where, key ?? '', value);
    }
    return identity;
  }
}
