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

/** Where the walk is: the keys from the input's root to the value it looks into, how many values it has seen, what it leaves out. */
interface Walk {
  path: PropertyKey[];
  seen: number;
  skip: unknown;
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
 * or undefined when the input is clean. Depth first, bounded by MAX_INPUT_DEPTH (so is the
 * recursion) and MAX_INPUT_VALUES. Own enumerable keys of objects are walked (all that parsed JSON
 * has; `Object.keys` and a property read are 4x cheaper per value than `Reflect.ownKeys` and
 * `Reflect.get`), arrays by index, without calling anything the input could have replaced and
 * without allocating per value: a path is built only for a fault. An object whose prototype is not
 * the plain one (a `__proto__` already applied, by an object literal or a parser that assigns keys)
 * counts as a `__proto__` key. `skip` is left out of the walk (a part another call inspects on its own).
 */
export function findInputFault(value: unknown, skip?: unknown): InputFault | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  return faultIn(value, { path: [], seen: 1, skip });
}

function faultIn(current: object, walk: Walk): InputFault | undefined {
  const isArray = Array.isArray(current);
  const proto: unknown = Reflect.getPrototypeOf(current);
  if (proto !== null && proto !== (isArray ? Array.prototype : Object.prototype)) return reserved([...walk.path, '__proto__'], '__proto__');
  if (walk.path.length >= MAX_INPUT_DEPTH) {
    const path = [...walk.path];
    return { path, code: 'too_deep', message: `${propertyPath(path)} is nested deeper than ${MAX_INPUT_DEPTH} levels of objects and arrays` };
  }
  if (isArray) {
    const items = current as unknown[];
    for (let i = 0; i < items.length; i++) {
      const fault = childFault(walk, i, items[i]);
      if (fault) return fault;
    }
    return undefined;
  }
  for (const key of Object.keys(current)) {
    if (RESERVED_KEYS.has(key)) return reserved([...walk.path, key], key);
    if (key.includes('\u0000')) return nul([...walk.path, key], true);
    const fault = childFault(walk, key, (current as Record<string, unknown>)[key]);
    if (fault) return fault;
  }
  return undefined;
}

/** The fault of one value at `key` of the object or array the walk is in, counting it. */
function childFault(walk: Walk, key: PropertyKey, child: unknown): InputFault | undefined {
  if (typeof child === 'string') return child.includes('\u0000') ? nul([...walk.path, key], false) : countFault(walk);
  const fault = countFault(walk);
  if (fault || child === null || typeof child !== 'object' || child === walk.skip) return fault;
  walk.path.push(key);
  const inner = faultIn(child, walk);
  walk.path.pop();
  return inner;
}

function countFault(walk: Walk): InputFault | undefined {
  if (++walk.seen <= MAX_INPUT_VALUES) return undefined;
  return { path: [], code: 'too_many_values', message: `The input holds more than ${MAX_INPUT_VALUES} values` };
}


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
