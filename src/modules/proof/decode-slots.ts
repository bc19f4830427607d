// How many proof uploads decode images at once (PROOF_DECODE_CONCURRENCY): each decode holds up to
// PROOF_MAX_DECODED_SIZE of bitmap and a core for seconds, so without a bound a few uploads at once
// take the memory and the CPU of every other request. Uploads past the bound wait in a short queue,
// never past their own deadline (what is left of PROOF_UPLOAD_TIMEOUT); a full queue or a deadline
// passed is 503 with Retry-After, so that the driver app tries again later.
import { AppError } from '../../shared/errors.js';

/** Uploads that may wait for a slot, per slot. */
const WAITING_PER_SLOT = 4;
const RETRY_AFTER_SECONDS = 5;

interface Waiter {
  grant(): void;
}

export class DecodeSlots {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting = concurrency * WAITING_PER_SLOT,
  ) {}

  /** Resolves with the slot's release once one is free; 503 when the queue is full or `waitMs` passes first. */
  async acquire(waitMs: number): Promise<() => void> {
    if (this.active < this.concurrency) {
      this.active += 1;
      return this.releaser();
    }
    if (this.waiting.length >= this.maxWaiting || waitMs <= 0) throw busy();
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(busy());
      }, waitMs);
      this.waiting.push(waiter);
    });
    return this.releaser();
  }

  get inUse(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the first in the queue (active stays the same).
      const next = this.waiting.shift();
      if (next) next.grant();
      else this.active -= 1;
    };
  }
}

const busy = () =>
  new AppError(503, 'PROOF_BUSY', 'Too many proof images are being processed; try again shortly', {
    'retry-after': String(RETRY_AFTER_SECONDS),
  });
