import type { Migration } from './index.js';

/**
 * Dunning letters: a level whose rule has `sendLetter` keeps the letter's texts (its
 * `documentTemplate` or the system texts, placeholders filled in) on its step, from which the letter
 * PDF is rendered; NULL for a step without a letter.
 */
export const dunningLetters: Migration = {
  version: 30,
  name: 'dunning_letters',
  sql: `
ALTER TABLE dunning_steps ADD COLUMN letter TEXT;
`,
};
