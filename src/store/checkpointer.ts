import fs from 'node:fs';
import os from 'node:os';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The worker's code (CommonJS, evaluated): its own connection to the database file runs a PASSIVE
 * checkpoint on each request, which copies the committed WAL frames into the database file and syncs
 * both, without taking the write lock. It answers with the frames it copied (all of the WAL's when
 * the WAL started over since the last one).
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('synchronous = NORMAL');
let before = 0;
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    const { checkpointed } = db.pragma('wal_checkpoint(PASSIVE)')[0];
    parentPort.postMessage({ ok: true, copied: checkpointed >= before ? checkpointed - before : checkpointed });
    before = checkpointed;
  } catch (err) {
    parentPort.postMessage({ ok: false, error: String(err && err.message || err) });
  }
});
`;

type Outcome = { ok: true; copied: number } | { ok: false; error: string };

/** The WAL pages a checkpoint should copy (as SQLite's automatic checkpoint does on the loop). */
const PAGES_PER_CHECKPOINT = 256;
const MIN_PAUSE_MS = 20;
const MAX_PAUSE_MS = 1000;
/** WAL size past which the WAL should start over (see `restartDue`): 4,096 pages of 4 KiB. */
export const RESTART_BYTES = 16 * 1024 * 1024;
/**
 * What the write connection cuts the WAL file back to when the WAL starts over (`journal_size_limit`),
 * should one long transaction have grown it past this. Steady writes start the WAL over at about
 * RESTART_BYTES, below it, so the file is written again from its start and never cut: cutting it back
 * to 4 MiB at each start held the event loop for 26-65 ms in that COMMIT, and writing the file past
 * 4 MiB again cost about 40 % more per write than overwriting it (bench/wal-restart.mjs).
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Where the WAL index (the `-shm` file) keeps the page size (u16, 1 for 65,536) and the number of valid
 * frames in the WAL (u32), both in the machine's byte order: the first copy of its header
 * (https://www.sqlite.org/walformat.html, "The WAL-Index Header").
 */
const SHM_PAGE_SIZE_AT = 14;
const SHM_FRAMES_AT = 16;

/**
 * SQLite's WAL checkpoints in a worker thread, so that the event loop never waits while committed
 * pages are copied into the database file and it is synced (a checkpoint inside a COMMIT held the
 * loop for 5-200 ms, as long as the disk took). The store asks for one after each COMMIT; one runs at
 * a time and the requests made meanwhile share the next. Each checkpoint syncs the disk twice, so
 * they are spaced to copy about PAGES_PER_CHECKPOINT pages each: the next one starts when the pages
 * written at the rate since the one before should reach that many, between MIN_PAUSE_MS and
 * MAX_PAUSE_MS after the last one started.
 *
 * The WAL starts over only when a write transaction begins with every frame copied, which under
 * steady writes never happens by itself: the next transaction begins while the worker copies the
 * last one. So past RESTART_BYTES of WAL (`restartDue`, read from the WAL index: the file's size
 * tells nothing once the WAL starts over inside it) the store lets the worker finish a checkpoint
 * before its next write transaction (`drain`): the writes wait a moment, not the event loop. If a
 * checkpoint fails, the worker stops and `failed` resolves with why (the store then gives the
 * checkpoints back to its COMMITs).
 */
export class Checkpointer {
  private readonly worker: Worker;
  private running = false;
  private wanted = false;
  private stopped = false;
  /** When (performance.now()) the last checkpoint and the one before it started. */
  private lastAt = 0;
  private previousAt: number | undefined;
  private pauseMs = MIN_PAUSE_MS;
  private timer: NodeJS.Timeout | undefined;
  private readonly shmFile: string;
  /** The WAL index, opened read-only at the first `restartDue` (it exists once a connection uses the WAL). */
  private shm: number | undefined;
  private readonly header = Buffer.alloc(SHM_FRAMES_AT + 4 - SHM_PAGE_SIZE_AT);
  /** Waiting for the end of the next checkpoint to start (`drain`). */
  private drains: Array<() => void> = [];
  /** The drains the running checkpoint answers. */
  private finishing: Array<() => void> = [];
  private readonly exited: Promise<void>;
  /** Resolves with the reason when the worker has stopped checkpointing for good. */
  readonly failed: Promise<string>;
  /** Checkpoints started so far. */
  private started = 0;
  private onFailure!: (message: string) => void;

  constructor(file: string) {
    this.failed = new Promise((resolve) => (this.onFailure = resolve));
    this.shmFile = `${file}-shm`;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER, { eval: true, workerData: { file, driver } });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (outcome: Outcome) => this.checkpointed(outcome));
    this.worker.on('error', (err) => this.fail(err.message));
    // An open store must not keep the process alive on its own. After the listeners: a first
    // 'message' listener refs the worker's message port again, which kept every process that had
    // opened a store (stdio after its client left) running.
    this.worker.unref();
  }

  /** Checkpoints started so far (how often the disk was synced for them). */
  get checkpoints(): number {
    return this.started;
  }

  /** The WAL holds more than RESTART_BYTES of frames: the next write transaction should wait for `drain`. */
  get restartDue(): boolean {
    return !this.stopped && this.walBytes() >= RESTART_BYTES;
  }

  /** The bytes of the pages in the WAL, from the WAL index's header (0 while there is no WAL index). */
  private walBytes(): number {
    try {
      this.shm ??= fs.openSync(this.shmFile, 'r');
      if (fs.readSync(this.shm, this.header, 0, this.header.length, SHM_PAGE_SIZE_AT) < this.header.length) return 0;
    } catch {
      return 0;
    }
    const le = os.endianness() === 'LE';
    const pageSize = le ? this.header.readUInt16LE(0) : this.header.readUInt16BE(0);
    const frames = le ? this.header.readUInt32LE(SHM_FRAMES_AT - SHM_PAGE_SIZE_AT) : this.header.readUInt32BE(SHM_FRAMES_AT - SHM_PAGE_SIZE_AT);
    return frames * (pageSize === 1 ? 65_536 : pageSize);
  }

  /** Asks for a checkpoint of what is committed now. */
  request(): void {
    if (this.stopped || this.timer) return;
    if (this.running) {
      this.wanted = true;
      return;
    }
    const wait = this.lastAt + this.pauseMs - performance.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.request();
      }, wait);
      this.timer.unref();
      return;
    }
    this.start();
  }

  /** Resolves when a checkpoint that starts after the call has finished (at once when stopped). */
  drain(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const drained = new Promise<void>((resolve) => this.drains.push(resolve));
    this.holdWhileAwaited();
    if (!this.running) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = undefined;
      this.start();
    } else {
      this.wanted = true;
    }
    return drained;
  }

  private start(): void {
    this.wanted = false;
    this.running = true;
    this.started += 1;
    this.previousAt = this.lastAt === 0 ? undefined : this.lastAt;
    this.lastAt = performance.now();
    this.finishing = this.drains;
    this.drains = [];
    this.worker.postMessage('checkpoint');
  }

  private checkpointed(outcome: Outcome): void {
    this.running = false;
    const finished = this.finishing;
    this.finishing = [];
    for (const resolve of finished) resolve();
    this.holdWhileAwaited();
    if (!outcome.ok) return this.fail(outcome.error);
    if (this.previousAt !== undefined) {
      const pagesPerMs = Math.max(outcome.copied, 1) / Math.max(this.lastAt - this.previousAt, 1);
      this.pauseMs = Math.min(MAX_PAUSE_MS, Math.max(MIN_PAUSE_MS, PAGES_PER_CHECKPOINT / pagesPerMs));
    }
    if (this.drains.length) this.start();
    else if (this.wanted) this.request();
  }

  /**
   * The worker keeps the process alive while a write waits for its checkpoint (`drain`), and only
   * then: an awaited checkpoint of an unreferenced worker let a process with nothing else to do
   * (a script using the store, `billing-mcp jobs run`) end in the middle of its write.
   */
  private holdWhileAwaited(): void {
    if (this.stopped) return;
    if (this.drains.length + this.finishing.length > 0) this.worker.ref();
    else this.worker.unref();
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
    for (const resolve of [...this.finishing, ...this.drains]) resolve();
    this.finishing = [];
    this.drains = [];
    if (this.shm !== undefined) fs.closeSync(this.shm);
    this.shm = undefined;
    // Kept alive until the worker has closed its connection.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
