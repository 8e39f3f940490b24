import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The worker's code (CommonJS, evaluated): its own connection to the database file runs a PASSIVE
 * checkpoint on each request, which copies the committed WAL frames into the database file and syncs
 * both, without taking the write lock; it answers with the outcome.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = NORMAL');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true });
  } catch (err) {
    parentPort.postMessage({ ok: false, error: String(err && err.message || err) });
  }
});
`;

/**
 * SQLite's WAL checkpoints in a worker thread, so that the event loop never waits while committed
 * pages are copied into the database file and it is synced (a checkpoint inside a COMMIT held the
 * loop for 5-200 ms, as long as the disk took). The store asks for one after each COMMIT; one runs at
 * a time, at most every `intervalMs`, and the requests made meanwhile share the next.
 *
 * A PASSIVE checkpoint never blocks the writer, so it cannot always finish while writes keep coming;
 * the write connection's own automatic checkpoint, at a larger size, stays as the bound on the WAL
 * and then has little left to copy. If a checkpoint fails, the worker stops and `failed` resolves
 * with why (the store then gives the checkpoints back to its COMMITs).
 */
export class Checkpointer {
  private readonly worker: Worker;
  private running = false;
  private wanted = false;
  private stopped = false;
  private lastAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly exited: Promise<void>;
  /** Resolves with the reason when the worker has stopped checkpointing for good. */
  readonly failed: Promise<string>;
  private onFailure!: (message: string) => void;

  constructor(
    file: string,
    private readonly intervalMs = 20,
  ) {
    this.failed = new Promise((resolve) => (this.onFailure = resolve));
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, driver } });
    // An open store must not keep the process alive on its own.
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (outcome: { ok: boolean; error?: string }) => {
      this.running = false;
      if (!outcome.ok) return this.fail(outcome.error ?? 'checkpoint failed');
      if (this.wanted) this.request();
    });
    this.worker.on('error', (err) => this.fail(err.message));
  }

  /** Asks for a checkpoint of what is committed now. */
  request(): void {
    if (this.stopped) return;
    if (this.running || this.timer) {
      this.wanted = true;
      return;
    }
    const wait = this.lastAt + this.intervalMs - performance.now();
    if (wait > 0) {
      this.wanted = true;
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.request();
      }, wait);
      this.timer.unref();
      return;
    }
    this.wanted = false;
    this.running = true;
    this.lastAt = performance.now();
    this.worker.postMessage('checkpoint');
  }

  private fail(message: string): void {
    if (this.stopped) return;
    void this.close();
    this.onFailure(message);
  }

  /** Lets the running checkpoint finish, closes the worker's connection and ends the worker. */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // Kept alive until the worker has closed its connection.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
