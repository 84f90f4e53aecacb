import type { AttributeSpec } from '../../../contract/index.js';
import { PermanentError } from '../../model/errors.js';
import type { KeyValue } from '../../otlp/messages.js';
import { scalarBoolean, scalarString } from '../../otlp/values.js';
import type { ContractValues } from '../contract-values.js';

type Scalar<S extends AttributeSpec> = S['type'] extends 'boolean' ? boolean : string;

/** A metric's attributes read into the fields the contract names (`key`); null when absent. */
export type AttributeValues<A extends readonly AttributeSpec[]> = { -readonly [S in A[number] as S['key']]: Scalar<S> | null };

const list = (names: readonly string[]): string => (names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`);

/**
 * Reads one metric's attributes as its table in the contract says: each by name, as a string or a boolean,
 * strings length-checked, values of a closed set checked, mandatory ones required. Attributes outside the
 * table are left alone (they still take part in the stream's identity). A violation refuses the export.
 */
export class AttributeReader<A extends readonly AttributeSpec[]> {
  private readonly byName = new Map<string, AttributeSpec>();
  /** Mandatory attributes without a closed value set, named together when one is missing. */
  private readonly required: readonly AttributeSpec[];
  private readonly requiredMessage: string;

  constructor(
    metric: string,
    private readonly specs: A,
    private readonly contract: ContractValues,
  ) {
    for (const spec of specs) this.byName.set(spec.name, spec);
    this.required = specs.filter((spec) => spec.mandatory === true && spec.closed !== true);
    this.requiredMessage = `${metric} points need ${list(this.required.map((spec) => spec.name))}`;
  }

  /** Typed, length-checked values (no set or presence checks: see {@link check}). */
  typed(attributes: readonly KeyValue[], where: string): AttributeValues<A> {
    const out: Record<string, string | boolean | null> = {};
    for (const spec of this.specs) out[spec.key] = null;
    for (const attribute of attributes) {
      const name = attribute.key ?? '';
      const spec = this.byName.get(name);
      if (spec === undefined) continue;
      if (spec.type === 'boolean') {
        const value = scalarBoolean(attribute.value);
        if (value === undefined) throw new PermanentError(`${where}: attribute ${name} must be a boolean`, 'bad_attribute');
        out[spec.key] = value;
      } else {
        const value = scalarString(attribute.value);
        if (value === undefined) throw new PermanentError(`${where}: attribute ${name} must be a string`, 'bad_attribute');
        out[spec.key] = this.contract.keep(where, name, value);
      }
    }
    return out as AttributeValues<A>;
  }

  /** Closed value sets and mandatory attributes of this table, over values read by this or a wider table. */
  check(values: AttributeValues<A>, where: string): void {
    const read = values as Record<string, string | boolean | null>;
    for (const spec of this.specs) {
      const value = read[spec.key] ?? null;
      if (spec.closed !== true || spec.values === undefined) continue;
      if (value === null ? spec.mandatory === true : !spec.values.includes(value as string)) {
        throw new PermanentError(
          `${where}: attribute ${spec.name} must be one of ${spec.values.join(', ')} (got ${value === null ? 'nothing' : JSON.stringify(value)})`,
          'bad_attribute',
        );
      }
    }
    for (const spec of this.required) {
      if ((read[spec.key] ?? null) === null) throw new PermanentError(`${where}: ${this.requiredMessage}`, 'bad_attribute');
    }
  }

  read(attributes: readonly KeyValue[], where: string): AttributeValues<A> {
    const values = this.typed(attributes, where);
    this.check(values, where);
    return values;
  }
}
