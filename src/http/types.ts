export type JsonSchemaProperties = Record<string, { type?: unknown } | undefined>;
