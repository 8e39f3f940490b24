/**
 * The one error type of the service. Domain code throws it; the HTTP facade and the MCP server each
 * map it in one place (problem+json with a status, or an `isError` tool result).
 */

export type ErrorKind =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_timeout'
  | 'conflict'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'validation'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

export interface Violation {
  propertyPath: string;
  message: string;
  code: string;
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  violations?: Violation[];
}

const KINDS: Record<ErrorKind, { status: number; type: string; title: string }> = {
  bad_request: { status: 400, type: '/problems/bad-request', title: 'Bad request' },
  unauthorized: { status: 401, type: '/problems/unauthorized', title: 'Unauthorized' },
  forbidden: { status: 403, type: '/problems/forbidden', title: 'Forbidden' },
  not_found: { status: 404, type: '/problems/not-found', title: 'Not found' },
  // The contract's closed list of problem types has no entry of its own for 405.
  method_not_allowed: { status: 405, type: '/problems/bad-request', title: 'Method not allowed' },
  // Nor for 408 (a body that arrives too slowly).
  request_timeout: { status: 408, type: '/problems/bad-request', title: 'Request timeout' },
  conflict: { status: 409, type: '/problems/conflict', title: 'Conflict' },
  unsupported_media_type: {
    status: 415,
    type: '/problems/unsupported-media-type',
    title: 'Unsupported media type',
  },
  payload_too_large: { status: 413, type: '/problems/payload-too-large', title: 'Payload too large' },
  validation: { status: 422, type: '/problems/validation', title: 'Validation failed' },
  rate_limited: { status: 429, type: '/problems/rate-limited', title: 'Rate limited' },
  internal: { status: 500, type: '/problems/internal', title: 'Internal error' },
  unavailable: { status: 503, type: '/problems/unavailable', title: 'Service unavailable' },
};

export class AppError extends Error {
  readonly kind: ErrorKind;
  readonly violations: Violation[] | undefined;
  /**
   * The unit of work commits what it wrote before this error instead of rolling it back: for a
   * failure whose side effect must stand (a token family revoked on reuse).
   */
  keepChanges = false;
  /** For `unavailable`: seconds after which to retry, sent as `Retry-After` over HTTP (default 1). */
  retryAfterSeconds: number | undefined;

  constructor(kind: ErrorKind, detail: string, violations?: Violation[]) {
    super(detail);
    this.name = 'AppError';
    this.kind = kind;
    this.violations = violations;
  }

  get status(): number {
    return KINDS[this.kind].status;
  }

  toProblem(): Problem {
    const k = KINDS[this.kind];
    const problem: Problem = { type: k.type, title: k.title, status: k.status, detail: this.message };
    if (this.violations?.length) problem.violations = this.violations;
    return problem;
  }

  /** One line for humans and models: `Validation failed: code must be unique`. */
  summary(): string {
    return `${KINDS[this.kind].title}: ${this.message}`;
  }
}

/** A 422 for a single field. */
export function invalid(propertyPath: string, message: string, code = 'invalid'): AppError {
  return new AppError('validation', message, [{ propertyPath, message, code }]);
}

/** A 422 with several field violations; the detail joins their messages. */
export function invalidMany(violations: Violation[]): AppError {
  return new AppError('validation', violations.map((v) => v.message).join('; '), violations);
}

/**
 * The tool that shows the ids of each resource, named in its 404 so that a call with a wrong id is
 * fixed in one retry (a test checks that every tool named exists).
 */
export const FOUND_WITH: Readonly<Record<string, string>> = {
  'Billing group': 'list_billing_groups',
  'Billing run': 'list_billing_runs',
  Coupon: 'list_coupons',
  'Credit note': 'list_credit_notes',
  'Custom field': 'list_custom_fields',
  Customer: 'list_customers',
  'Customer e-mail address': 'list_customer_email_addresses',
  'E-mail': 'list_emails',
  Feature: 'list_features',
  Installment: 'get_payment_plan',
  Invoice: 'list_invoices',
  'Invoice address': 'list_invoice_addresses',
  Measurement: 'list_measurements',
  'Measurement value': 'get_subscription_usage',
  Offer: 'list_offers',
  'Offer recipient': 'get_offer',
  'Overdue rule': 'list_overdue_rules',
  'Payment method': 'list_payment_methods',
  'Payment plan': 'list_payment_plans',
  Plan: 'list_plans',
  'Price plan': 'list_price_plans',
  Product: 'list_products',
  'SEPA mandate': 'list_sepa_mandates',
  'SEPA XML payment': 'list_sepa_xml_payments',
  Subscription: 'list_subscriptions',
  'Subscription item': 'get_subscription',
  'Tax group': 'list_tax_groups',
  Unit: 'list_units',
  Webhook: 'list_webhooks',
  'Webhook delivery': 'list_webhook_deliveries',
};

export function notFound(resource: string, id: string): AppError {
  const tool = FOUND_WITH[resource];
  return new AppError('not_found', `${resource} ${id} was not found${tool ? `; ${tool} shows the ids` : ''}`);
}

/** Throws the 404 of `notFound`; for `lookup() ?? notFoundError(…)` expressions. */
export function notFoundError(resource: string, id: string): never {
  throw notFound(resource, id);
}

export function conflict(detail: string): AppError {
  return new AppError('conflict', detail);
}

/** Anything that is not an AppError becomes an internal error without leaking its message. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', 'An internal error occurred; it has been logged.');
}
