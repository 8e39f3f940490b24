// The COMMIT that starts SQLite's WAL over, with the WAL file cut back to 4 MiB at that moment (the
// store's `journal_size_limit` before the twelfth session) against the file written again from its
// start (64 MiB, WAL_SIZE_LIMIT_BYTES now, above the ~16 MiB at which the store starts the WAL over).
// A write connection as the store's (WAL, synchronous=NORMAL, no automatic checkpoint) commits 40
// units of 250 rows of 2 KB (about 20 MiB of WAL), a second connection checkpoints them (as the
// store's worker does), and the next COMMIT starts the WAL over: BENCH_WAL_ROUNDS rounds (default 10)
// per setting, alternating BENCH_WAL_RUNS times (default 3). Figures: the longest of those COMMITs
// (the event loop waits for it) and the time of all the units' writes.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { report, tempDb } from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_WAL_ROUNDS ?? 10);
const RUNS = Number(process.env.BENCH_WAL_RUNS ?? 3);
const UNITS = 40;
const ROWS = 250;
const ROW = 'x'.repeat(2000);

function run(file, limitBytes) {
  for (const suffix of ['', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
  const writer = new Database(file);
  writer.pragma('journal_mode = WAL');
  writer.pragma('synchronous = NORMAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.pragma(`journal_size_limit = ${limitBytes}`);
  const checkpointer = new Database(file);
  checkpointer.pragma('synchronous = NORMAL');
  writer.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  const insert = writer.prepare('INSERT INTO t (v) VALUES (?)');
  let writesMs = 0;
  let restartMax = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let unit = 0; unit < UNITS; unit++) {
      const t = performance.now();
      writer.exec('BEGIN IMMEDIATE');
      for (let i = 0; i < ROWS; i++) insert.run(ROW);
      writer.exec('COMMIT');
      const ms = performance.now() - t;
      writesMs += ms;
      // The first unit after a round's checkpoint starts the WAL over (the very first has no WAL to start over).
      if (unit === 0 && round > 0) restartMax = Math.max(restartMax, ms);
    }
    checkpointer.pragma('wal_checkpoint(PASSIVE)');
  }
  writer.close();
  checkpointer.close();
  return { writesMs, restartMax };
}

const file = tempDb('wal-restart');
const settings = { cutTo4MiB: 4 * 1024 * 1024, writtenAgain: 64 * 1024 * 1024 };
const results = Object.fromEntries(Object.keys(settings).map((k) => [k, []]));
try {
  for (let r = 0; r < RUNS; r++) for (const [name, limit] of Object.entries(settings)) results[name].push(run(file, limit));
} finally {
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
}
const range = (xs, d = 1) => `${Math.min(...xs).toFixed(d)}-${Math.max(...xs).toFixed(d)}`;
report(
  `WAL restart: ${UNITS} units of ${ROWS} rows of 2 KB between checkpoints, ${ROUNDS} rounds, ${RUNS} runs each`,
  Object.fromEntries(
    Object.entries(results).map(([name, runs]) => [
      name,
      { restartCommitMaxMs: range(runs.map((x) => x.restartMax)), writesMs: range(runs.map((x) => x.writesMs), 0) },
    ]),
  ),
);
