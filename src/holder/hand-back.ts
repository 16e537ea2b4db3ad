/**
 * Thrown while the background holder runs a command a thin client handed it (src/holder/door.ts)
 * when the command turns out to be one the holder cannot run exactly as the client's own process
 * would (it may prompt, page, read stdin, open the catalog, talk to a URL…): the client then runs
 * it itself. Only ever thrown before the command has written anything.
 */
export class HandBack extends Error {
  override readonly name = 'HandBack';
}
