import type { z } from 'zod';
import { AppError, type Violation } from '../errors.js';

/** `periods[0].contractPeriod` from a zod path. */
export function propertyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

function message(issue: z.core.$ZodIssue, at: string): string {
  const where = at || 'the input';
  if (issue.code === 'unrecognized_keys') {
    return `${where} has unknown field(s) ${issue.keys.map((k) => `'${k}'`).join(', ')}; remove them (see the input schema for the allowed fields)`;
  }
  if (issue.code === 'invalid_type' && issue.message.endsWith('received undefined')) {
    return `${where} is required (expected ${issue.expected})`;
  }
  if (issue.code === 'invalid_value') {
    return `${where} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  const text = issue.message.replace(/^Invalid input: /, '');
  return `${where} ${text.charAt(0).toLowerCase()}${text.slice(1)}`;
}

export function violationsOf(error: z.ZodError): Violation[] {
  return error.issues.map((issue) => {
    const at = propertyPath(issue.path);
    return { propertyPath: at, message: message(issue, at), code: issue.code };
  });
}

/** Query parameters are a 400, body fields a 422 (CONTRACT section 2). */
export function inputError(error: z.ZodError, kind: 'bad_request' | 'validation'): AppError {
  const violations = violationsOf(error);
  return new AppError(kind, violations.map((v) => v.message).join('; '), violations);
}
