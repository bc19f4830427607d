// Password hashing: argon2id (OWASP: 19 MiB, 2 iterations, parallelism 1), computed on libuv's
// thread pool by the argon2 package, so the event loop keeps serving other requests.
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import argon2 from 'argon2';
import { badRequest } from '../../shared/errors.js';
import { isCommonPassword } from './common-passwords.js';

const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

// At most one hash per core at once (libuv's pool would run 4): a login storm queues its own
// requests instead of oversubscribing the CPU that every other route needs. See bench/login.ts.
let maxConcurrent = availableParallelism();
let running = 0;

export function setPasswordHashConcurrency(n: number): void {
  maxConcurrent = Math.max(1, Math.floor(n));
}

const waiting: (() => void)[] = [];

async function limited<T>(work: () => Promise<T>): Promise<T> {
  if (running >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve));
  else running += 1;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running -= 1;
  }
}

export function hashPassword(password: string): Promise<string> {
  return limited(() => argon2.hash(password, OPTIONS));
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await limited(() => argon2.verify(hash, password));
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;
/** Spends the same time as a real check, so an unknown identifier cannot be told apart by timing. */
export async function verifyAgainstDummy(password: string): Promise<void> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(await dummy, password);
}

/** Length is checked by the body schemas (8..128); this refuses the common ones. */
export function assertAcceptablePassword(password: string, field = 'password'): void {
  if (password.length < 8 || password.length > 128) {
    throw badRequest(`body.${field} must be 8 to 128 characters`, 'INVALID_PASSWORD');
  }
  if (isCommonPassword(password)) {
    throw badRequest(`body.${field} is too common; choose another`, 'PASSWORD_TOO_COMMON');
  }
}
