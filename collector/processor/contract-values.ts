import { createHash } from 'node:crypto';
import { INVALID_EXTENSION_ID, RESOURCE_ATTRIBUTES, isPseudoExtensionId, isValidExtensionId } from '../../contract/index.js';
import type { InstanceIdentity, ResourceIdentity } from '../model/batches.js';
import { PermanentError } from '../model/errors.js';
import type { KeyValue } from '../otlp/messages.js';
import { canonicalAttributes, scalarString } from '../otlp/values.js';
import { derivedInstanceId, processPid } from './sender-identity.js';

/** Resource attribute name → the identity field it is kept in (the contract's `key`). */
const RESOURCE_FIELDS = new Map<string, keyof InstanceIdentity>(RESOURCE_ATTRIBUTES.map((attribute) => [attribute.name, attribute.key]));
/** Distinct valid ids remembered (junk ids churn the set; it is cleared when full). */
const VALID_IDS_MEMO = 100_000;

/**
 * Control characters (C0, DEL, C1) and the bidirectional embedding, override and isolate characters: invisible,
 * or able to reorder what a table, a CSV file or a terminal shows. Replaced, as lone surrogates are.
 */
/* eslint-disable no-control-regex -- matching control characters is the point */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/* eslint-enable no-control-regex */

/** A sender's string as kept: well-formed (lone surrogates → U+FFFD) and without control or bidi characters (→ U+FFFD). */
function normaliseText(value: string): string {
  return value.replace(UNSAFE, '\ufffd');
}

/** Checks the values of the contract that are client- or sender-controlled before anything keeps them. */
export class ContractValues {
  private readonly validIds = new Set<string>();

  constructor(private readonly maxLength: number) {}

  /**
   * A kept string: refused outright when longer than the limit (a huge string is an attack, not data); else
   * normalised once, here at the edge ({@link normaliseText}), so that one name is one name everywhere after.
   */
  keep(where: string, attribute: string, value: string): string {
    if (value.length > this.maxLength) {
      throw new PermanentError(`${where}: attribute ${attribute} is ${value.length} characters long; the limit is ${this.maxLength}`, 'attribute_too_long');
    }
    return normaliseText(value);
  }

  /**
   * An extension id as stored: grammar-valid ids as they are, the agent's two buckets as they are, anything
   * else counted under `_invalid` as the agent itself would (a sender that does not validate is not an error).
   */
  extensionId(id: string): string {
    if (this.validIds.has(id)) return id;
    if (isPseudoExtensionId(id) || isValidExtensionId(id)) {
      if (this.validIds.size >= VALID_IDS_MEMO) this.validIds.clear();
      this.validIds.add(id);
      return id;
    }
    return INVALID_EXTENSION_ID;
  }

  resource(attributes: readonly KeyValue[], where: string): ResourceIdentity {
    const canonical = canonicalAttributes(attributes);
    const identity = Object.fromEntries(RESOURCE_ATTRIBUTES.map((attribute) => [attribute.key, null])) as unknown as ResourceIdentity;
    identity.canonical = canonical;
    identity.key = createHash('sha256').update(canonical).digest('base64url').slice(0, 22);
    for (const attribute of attributes) {
      const field = RESOURCE_FIELDS.get(attribute.key ?? '');
      if (field === undefined) continue;
      const value = scalarString(attribute.value);
      if (value !== undefined) identity[field] = this.keep(where, attribute.key ?? '', value);
    }
    identity.instanceDerived = false;
    if (identity.instanceId === null) {
      identity.instanceId = derivedInstanceId(identity.host, processPid(attributes));
      identity.instanceDerived = identity.instanceId !== null;
    }
    return identity;
  }
}
