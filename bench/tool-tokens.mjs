// What a model reads of each tool, in o200k tokens: description, input schema, and the bytes of the
// output schema. `npm run build` first; `node bench/tool-tokens.mjs [toolset]`. The budgets themselves
// are enforced by test/budgets.test.ts; this shows where the tokens go.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { Catalog } from '../dist/registry/catalog.js';
import { OPERATIONS } from '../dist/tools/index.js';

const only = process.argv[2];
const catalog = new Catalog(OPERATIONS, { readOnly: false });
const rows = OPERATIONS.filter((op) => !only || op.toolset === only).map((op) => {
  const tool = catalog.descriptor(op.name);
  return {
    tool: op.name,
    toolset: op.toolset,
    description: encode(tool.description).length,
    input: encode(JSON.stringify(tool.inputSchema)).length,
    outputBytes: JSON.stringify(tool.outputSchema).length,
  };
});
rows.sort((a, b) => b.description + b.input - a.description - a.input);
console.table(rows);
const sum = (k) => rows.reduce((s, r) => s + r[k], 0);
console.log(`description + input: ${sum('description') + sum('input')} tokens; output schemas: ${sum('outputBytes')} bytes`);
