import { expect } from 'vitest';

type ErrorClass<T extends Error> = abstract new (...args: never[]) => T;

/** The error of class `cls` that `fn` throws; fails the test when it throws nothing or something else. */
export function thrownBy<T extends Error>(cls: ErrorClass<T>, fn: () => unknown): T {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(cls);
    return err as T;
  }
  throw new Error(`expected a ${cls.name}`);
}

/** The error of class `cls` that `p` rejects with; fails the test when it resolves or rejects with something else. */
export async function rejectionOf<T extends Error>(cls: ErrorClass<T>, p: Promise<unknown>): Promise<T> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(cls);
  return err as T;
}
