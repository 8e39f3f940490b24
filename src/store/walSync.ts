import fsp from 'node:fs/promises';

/**
 * Syncs SQLite's write-ahead log to disk off the event loop. The store's write connection runs with
 * synchronous=NORMAL (a COMMIT writes the WAL without waiting for the disk; SQLite still syncs around
 * each checkpoint, which keeps the file consistent after a power loss); the store then calls `sync`
 * after each COMMIT and answers the units of that COMMIT only when it resolves, so that an
 * acknowledged write is on disk as with synchronous=FULL, while the disk works in libuv's thread
 * pool and the event loop serves requests and the next units.
 *
 * One sync is in flight at a time; the COMMITs made meanwhile share the next one.
 */
export class WalSync {
  /** The sync that has not started yet: COMMITs join it until it starts. */
  private pending: Promise<void> | undefined;
  /** The sync in flight (settled when none is). */
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly datasync: () => Promise<void>,
    private readonly release: () => Promise<void> = async () => undefined,
  ) {}

  /** The WAL file of a database: `fdatasync` on a handle opened at the first sync and kept until `close`. */
  static ofFile(databaseFile: string): WalSync {
    let handle: Promise<fsp.FileHandle> | undefined;
    return new WalSync(
      async () => {
        handle ??= fsp.open(`${databaseFile}-wal`, 'r+');
        await (await handle).datasync();
      },
      async () => {
        const open = handle;
        handle = undefined;
        if (open) await (await open).close();
      },
    );
  }

  /** Resolves once everything written to the WAL before the call is on disk. */
  sync(): Promise<void> {
    if (this.pending) return this.pending;
    const next: Promise<void> = this.running.then(() => {
      this.pending = undefined;
      return this.datasync();
    });
    this.pending = next;
    this.running = next.catch(() => undefined);
    return next;
  }

  /** Waits for the syncs asked for, then lets the file go. */
  async close(): Promise<void> {
    await this.running;
    await this.release();
  }
}
