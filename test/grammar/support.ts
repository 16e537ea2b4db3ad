/** Small builders for expected grammar models. */
import type { Condition, FieldRef, Filter, FilterOp, JsonPathStep, LogicTree } from '../../src/grammar/types.js';

/** `field('meta', '->', 'a', '->>', 'b')` → meta->a->>b */
export function field(name: string, ...path: string[]): FieldRef {
  const jsonPath: JsonPathStep[] = [];
  for (let i = 0; i < path.length; i += 2) jsonPath.push({ arrow: path[i] as '->' | '->>', key: path[i + 1] });
  return { name, jsonPath };
}

/** A filter condition; `name` may be a FieldRef. */
export function F(
  name: string | FieldRef,
  op: FilterOp,
  value: string | string[],
  extra: { negated?: boolean; modifier?: 'any' | 'all'; language?: string } = {},
): Filter {
  const f: Filter = { kind: 'filter', field: typeof name === 'string' ? field(name) : name, negated: extra.negated ?? false, op, value };
  if (extra.modifier !== undefined) f.modifier = extra.modifier;
  if (extra.language !== undefined) f.language = extra.language;
  return f;
}

export const and = (...conditions: Condition[]): LogicTree => ({ kind: 'and', negated: false, conditions });
export const or = (...conditions: Condition[]): LogicTree => ({ kind: 'or', negated: false, conditions });
export const not = (t: LogicTree): LogicTree => ({ ...t, negated: true });
