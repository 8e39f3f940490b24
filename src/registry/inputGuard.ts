import { AppError, type Violation } from '../errors.js';
import { propertyPath } from './validation.js';

/**
 * Keys that must never reach code that builds objects from input: assigning `obj['__proto__']`
 * changes an object's prototype, and `obj.constructor.prototype` / `obj.__proto__` lead to the
 * prototype every object of the process shares. No field of any resource has these names, so they
 * are refused anywhere in input rather than handled case by case.
 */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

export function isReservedKey(key: string): boolean {
  return RESERVED_KEYS.has(key);
}

/** Deepest nesting of objects and arrays in one input (the walk is bounded, and so is what follows it). */
export const MAX_INPUT_DEPTH = 32;
/** Most values (objects, arrays, scalars) in one input; a 1 MiB body holds far fewer in any real call. */
export const MAX_INPUT_VALUES = 100_000;

export interface InputFault {
  /** Path from the input's root to the offending key or value. */
  path: PropertyKey[];
  code: 'reserved_key' | 'too_deep' | 'too_many_values' | 'nul_character';
  message: string;
}

/** A value the walk has still to look into, and where it is: its parent's entry and its key there. */
interface Entry {
  value: object;
  parent: Entry | undefined;
  key: PropertyKey;
  depth: number;
}

/** The path from the root to an entry's value (built only for a fault: the walk allocates no paths). */
function pathOf(entry: Entry | undefined): PropertyKey[] {
  const path: PropertyKey[] = [];
  for (let e = entry; e?.parent; e = e.parent) path.push(e.key);
  return path.reverse();
}

const RESERVED_LIST = [...RESERVED_KEYS].join(', ');

function reserved(path: PropertyKey[], key: string): InputFault {
  const at = propertyPath(path);
  return {
    path,
    code: 'reserved_key',
    message: `'${key}'${path.length > 1 ? ` (at ${at})` : ''} is not allowed as a key: ${RESERVED_LIST} are reserved names and are refused anywhere in input`,
  };
}

/** U+0000 ends a C string: PostgreSQL refuses it in text and JSONB, so neither engine stores it. */
function nul(path: PropertyKey[], inKey: boolean): InputFault {
  return {
    path,
    code: 'nul_character',
    message: `${propertyPath(path)} contains the character U+0000 (NUL)${inKey ? ' in its key' : ''}; no field accepts it, remove it`,
  };
}

/**
 * The first reserved key, U+0000 in a key or a text, too deep nesting or too many values in `value`,
 * or undefined when the input is clean. Iterative (no recursion to overflow) and bounded by MAX_INPUT_DEPTH and
 * MAX_INPUT_VALUES. Own enumerable keys are walked (all that parsed JSON has; `Object.keys` and a
 * property read are 4x cheaper per value than `Reflect.ownKeys` and `Reflect.get`, measured on a batch
 * of 1,000 usage events), without calling anything the input could have replaced, and an
 * object whose prototype is not the plain one (a `__proto__` already applied, by an object literal or
 * a parser that assigns keys) counts as a `__proto__` key. `skip` is left out of the walk (a part
 * another call inspects on its own).
 */
export function findInputFault(value: unknown, skip?: unknown): InputFault | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const queue: Array<Entry | undefined> = [{ value, parent: undefined, key: '', depth: 0 }];
  let seen = 1;
  for (let head = 0; head < queue.length; head++) {
    const entry = queue[head]!;
    queue[head] = undefined;
    const current = entry.value;
    const isArray = Array.isArray(current);
    const proto: unknown = Reflect.getPrototypeOf(current);
    if (proto !== null && proto !== (isArray ? Array.prototype : Object.prototype)) return reserved([...pathOf(entry), '__proto__'], '__proto__');
    if (entry.depth >= MAX_INPUT_DEPTH) {
      const path = pathOf(entry);
      return { path, code: 'too_deep', message: `${propertyPath(path)} is nested deeper than ${MAX_INPUT_DEPTH} levels of objects and arrays` };
    }
    for (const key of Object.keys(current)) {
      if (RESERVED_KEYS.has(key)) return reserved([...pathOf(entry), key], key);
      const child: unknown = (current as Record<string, unknown>)[key];
      if (key.includes('\u0000')) return nul(childPath(entry, key, isArray), true);
      if (typeof child === 'string' && child.includes('\u0000')) return nul(childPath(entry, key, isArray), false);
      if (++seen > MAX_INPUT_VALUES) {
        return { path: [], code: 'too_many_values', message: `The input holds more than ${MAX_INPUT_VALUES} values` };
      }
      if (child !== null && typeof child === 'object' && child !== skip) queue.push({ value: child, parent: entry, key: isArray ? Number(key) : key, depth: entry.depth + 1 });
    }
  }
  return undefined;
}

/** The path of the value at `key` of the entry's value (an index of an array as a number). */
const childPath = (entry: Entry, key: string, isArray: boolean): PropertyKey[] => [...pathOf(entry), isArray ? Number(key) : key];

export function faultViolation(fault: InputFault): Violation {
  return { propertyPath: propertyPath(fault.path), message: fault.message, code: fault.code };
}

/**
 * Refuses input with a reserved key anywhere, or nested or sized beyond the limits: a 400 for query
 * parameters, a 422 for bodies and tool arguments (CONTRACT section 2). The executor calls this on
 * every operation's raw input before anything else reads it.
 */
export function guardInput(value: unknown, kind: 'bad_request' | 'validation'): void {
  const fault = findInputFault(value);
  if (fault) throw new AppError(kind, fault.message, [faultViolation(fault)]);
}
