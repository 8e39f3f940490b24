import { z } from 'zod';

/** Date-time on input: ISO 8601 with an explicit offset (`Z` or `+01:00`); without one it is rejected. */
export const dateTimeInput = z.iso.datetime({
  offset: true,
  message: 'must be an ISO 8601 date-time with an offset, e.g. 2026-01-31T12:00:00Z',
});
/** Date-time in responses: always UTC, `toISOString()` form. */
export const dateTime = z.iso.datetime({ offset: true });
export const date = z.iso.date({ message: 'must be a calendar date YYYY-MM-DD' });

export const id = z.string().min(1).max(255);

/**
 * The JSON Schema (draft 2020-12, as input) of `documented`, to put on a field that takes more than
 * it describes: input the domain checks itself, so that one answer names every problem (every event
 * of a batch, every field of an account) while the tool's schema still tells a model the shape.
 */
export function jsonSchemaOf(documented: z.ZodType): Record<string, unknown> {
  const { $schema: _schema, ...json } = z.toJSONSchema(documented, { io: 'input', target: 'draft-2020-12' });
  return json;
}

/** The two units of money on the wire (CONTRACT section 8): every money field's description names one. */
export const MINOR = 'integer, minor units (cents)';
export const MAJOR = 'decimal, major units';

export const text255 = z.string().max(255, { message: 'must be at most 255 characters' });

/** A BIC (ISO 9362) as pain.008 accepts it: no test BICs (location codes 0 and 1), one pattern for creditors and debtors. */
export const bicInput = z.string().regex(/^[A-Z]{6}[A-Z2-9][A-NP-Z0-9]([A-Z0-9]{3})?$/, {
  message: 'must be a BIC of 8 or 11 upper-case letters and digits, e.g. COBADEFFXXX or COBADEFF',
});

/** When a resource was created and last changed: said once in the server instructions (OUTPUT_CONVENTIONS). */
export const timestamps = {
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const pathId = (what: string) => id.describe(`Id of the ${what}.`);

/** Resources whose inputs accept their human number wherever they accept their id, with an example number. */
const NUMBERS = { customer: 'CUS-000001', subscription: 'SUB-000001', invoice: 'INV-2026-000001', offer: 'OFF-000001' } as const;
export type Numbered = keyof typeof NUMBERS;

/** An input naming a customer, subscription or invoice: "Id or number (CUS-000001) of the customer". */
export const idOrNumber = (resource: Numbered, what: string = resource) =>
  id.describe(`Id or number (${NUMBERS[resource]}) of the ${what}.`);

/** A list filter by a customer, subscription or invoice, given by id or number. */
export const filterBy = (resource: Numbered, items: string) =>
  id.optional().describe(`Only ${items} of this ${resource}: id or number (${NUMBERS[resource]}).`);

/**
 * Marks an input field that only the REST facade shows (an alias the interface defines for HTTP):
 * a model is shown one way to say a thing.
 */
export const REST_ONLY = 'x-rest-only';

/**
 * Marks an input field that the server instructions describe once for every tool (a list's page,
 * limit and order): a model's tool list does not repeat its description.
 */
export const CONVENTION = 'x-convention';

/** Query parameters every list operation takes. */
export const pageInput = {
  page: z.number().int().min(1, { message: 'must be an integer >= 1' }).default(1).describe('Page, from 1.').meta({ [CONVENTION]: true }),
  limit: z
    .number()
    .int()
    .min(0, { message: 'must be an integer from 0 to 100' })
    .max(100, { message: 'must be an integer from 0 to 100' })
    .optional()
    .describe('Rows per page (default 30); 0: only the counts.')
    .meta({ [CONVENTION]: true }),
  itemsPerPage: z
    .number()
    .int()
    .min(0, { message: 'must be an integer from 0 to 100' })
    .max(100, { message: 'must be an integer from 0 to 100' })
    .optional()
    .describe('Alias of limit.')
    .meta({ [REST_ONLY]: true }),
  order: z
    .strictObject({ createdAt: z.enum(['asc', 'desc']).describe('Default asc.') })
    .optional()
    .describe('Order by creation time, then id (HTTP: order[createdAt]=desc).')
    .meta({ [CONVENTION]: true }),
};

/** The fields of every list (page, limit, order) whose descriptions the server instructions give once. */
export const CONVENTION_FIELDS: ReadonlySet<string> = new Set(
  Object.entries(pageInput)
    .filter(([, schema]) => schema.meta()?.[CONVENTION] === true)
    .map(([name]) => name),
);

export interface PageRequest {
  page: number;
  limit: number;
  descending: boolean;
}

export function pageRequest(input: {
  page: number;
  limit?: number | undefined;
  itemsPerPage?: number | undefined;
  order?: { createdAt: 'asc' | 'desc' } | undefined;
}): PageRequest {
  return {
    page: input.page,
    limit: input.limit ?? input.itemsPerPage ?? 30,
    descending: input.order?.createdAt === 'desc',
  };
}

/** One page of a list operation: the page request from its input, the rows and count from `load`. */
export async function paged<T>(
  input: Parameters<typeof pageRequest>[0],
  load: (page: PageRequest) => Promise<{ rows: T[]; total: number }>,
): Promise<Page<T>> {
  const page = pageRequest(input);
  const { rows, total } = await load(page);
  return toPage(rows, total, page);
}

export const paginationMeta = z.object({
  pagination: z.object({
    totalItems: z.number().int(),
    itemsPerPage: z.number().int(),
    currentPage: z.number().int(),
    lastPage: z.number().int(),
    pageTotalItems: z.number().int(),
  }),
});

export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), meta: paginationMeta });
}

export interface Page<T> {
  data: T[];
  meta: {
    pagination: {
      totalItems: number;
      itemsPerPage: number;
      currentPage: number;
      lastPage: number;
      pageTotalItems: number;
    };
  };
}

export function toPage<T>(items: T[], totalItems: number, req: PageRequest): Page<T> {
  return {
    data: items,
    meta: {
      pagination: {
        totalItems,
        itemsPerPage: req.limit,
        currentPage: req.page,
        lastPage: req.limit === 0 ? 1 : Math.max(1, Math.ceil(totalItems / req.limit)),
        pageTotalItems: items.length,
      },
    },
  };
}

export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  violations: z
    .array(z.object({ propertyPath: z.string(), message: z.string(), code: z.string() }))
    .optional(),
});
