/** A turn that one holder has at a time (a connection, a key, a batch in flight); the rest wait in arrival order. */
export class Turn {
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  /** Undefined when the turn was free and is now taken; otherwise a promise of the turn. */
  take(): Promise<void> | undefined {
    if (!this.busy) {
      this.busy = true;
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** Hands the turn to the next in line, or frees it. */
  give(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.busy = false;
  }

  /** Nobody holds the turn (and so nobody waits for it). */
  get free(): boolean {
    return !this.busy;
  }
}
