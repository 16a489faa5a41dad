import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import type { Config } from '../config.js';

/**
 * At most this many hashes at once: every core but one, so a burst of logins queues instead of taking
 * the CPU the event loop needs for everyone else's requests (docs/performance.md, reads under login load).
 */
const MAX_CONCURRENT_HASHES = Math.max(1, availableParallelism() - 1);

/** A FIFO gate: `run` waits for a free slot, so no more than `size` tasks are in flight. */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly size: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * argon2id (the library's default algorithm — deliberately not passed) at the configured cost, which
 * config refuses below OWASP's minimum (19 MiB, 2 iterations, 1 lane).
 */
export class Passwords {
  private dummy: Promise<string>;
  private readonly gate = new Gate(MAX_CONCURRENT_HASHES);

  constructor(private readonly cost: Config['argon2']) {
    // Verified against when the email is unknown, so both answers take the same time.
    this.dummy = hash('latchkey-dummy-password', this.options());
  }

  private options() {
    return { memoryCost: this.cost.memoryCost, timeCost: this.cost.timeCost, parallelism: this.cost.parallelism };
  }

  hash(password: string): Promise<string> {
    return this.gate.run(() => hash(password, this.options()));
  }

  /** False for a missing hash too, after spending the same time. */
  async verify(storedHash: string | null, password: string): Promise<boolean> {
    try {
      if (!storedHash) {
        const dummy = await this.dummy;
        await this.gate.run(() => verify(dummy, password));
        return false;
      }
      return await this.gate.run(() => verify(storedHash, password));
    } catch {
      return false;
    }
  }
}
