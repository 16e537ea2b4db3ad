import type { SaxesParser } from 'saxes';

/**
 * Streaming XML for the workbook reader, over saxes (a strict, non-validating SAX parser: every
 * well-formedness error is reported, nothing is guessed; no DTD entity is expanded, so no billion
 * laughs). Elements reach the handler by their local name, so `<x:row>` (the Open XML SDK's and
 * ClosedXML's prefixed markup) reads as `<row>`; attribute quotes, entities and character
 * references are the parser's business. Input arrives a chunk at a time and nothing but the
 * parser's current token is held. Measured against the regular expressions it replaced:
 * docs/architecture.md.
 */

/** A part that is not well-formed XML, or not shaped as its kind of part must be: names the part and where. */
export class XmlError extends Error {}

/** What a part's reader does with its elements. */
export interface XmlEvents {
  /** An element opens: its local name (`x:row` → `row`) and its attributes as written. */
  open(name: string, attrs: Record<string, string>): void;
  /** An element closes (right after `open` for `<x/>`). */
  close(name: string): void;
  /** Character data, entities resolved, in one or more pieces. */
  text?(text: string): void;
  /** Set when the reader has all it wants: the rest of the part is not read. */
  readonly done?: boolean;
}

let saxes: typeof import('saxes') | undefined;

/** The local part of a qualified name: `x:row` → `row`. */
export function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

/** An attribute whatever its prefix (`r:id`, `ns1:id`): the first whose local name is `name` and that has a prefix. */
export function prefixedAttr(attrs: Record<string, string>, name: string): string | undefined {
  for (const key in attrs) if (key.endsWith(`:${name}`) && !key.startsWith('xmlns:')) return attrs[key];
  return undefined;
}

/** A parser being fed one part's bytes. */
export class XmlFeed {
  private readonly decoder = new TextDecoder('utf-8', { fatal: true });

  private constructor(
    private readonly parser: SaxesParser,
    readonly part: string,
  ) {}

  /** A feed for `part` (its name in the zip, for messages) calling `events`. */
  static async open(part: string, events: XmlEvents, fragment = false): Promise<XmlFeed> {
    saxes ??= await import('saxes');
    const parser = new saxes.SaxesParser({ fragment });
    const feed = new XmlFeed(parser, part);
    // once the reader is done, what follows is not its business (a fragment's end, a part's tail)
    parser.on('error', (err) => {
      if (!events.done) throw feed.error(`it is not well-formed XML: ${err.message.replace(/^\d+:\d+: /, '')}`);
    });
    parser.on('opentag', (tag) => events.done || events.open(localName(tag.name), tag.attributes as Record<string, string>));
    parser.on('closetag', (tag) => events.done || events.close(localName(tag.name)));
    if (events.text) {
      const text = events.text.bind(events);
      parser.on('text', text);
      parser.on('cdata', text);
    }
    return feed;
  }

  /** An error naming the part and where the parser stands in it. */
  error(why: string): XmlError {
    return new XmlError(`${this.part}, line ${this.parser.line}, column ${this.parser.column}: ${why}`);
  }

  /** Characters read so far. */
  get position(): number {
    return this.parser.position;
  }

  /** Parses the next bytes (UTF-8, split anywhere). */
  write(chunk: Uint8Array): void {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw this.error('it is not UTF-8 text');
    }
    this.parser.write(text);
  }

  /** The end of the part: an element left open is an error. */
  end(): void {
    try {
      this.parser.write(this.decoder.decode());
    } catch {
      throw this.error('it ends inside a UTF-8 character');
    }
    this.parser.close();
  }
}

/**
 * Parses a whole part from its chunks, stopping when `events.done` turns true; false when
 * `signal` stopped it first (the caller stops too).
 */
export async function parseXml(part: string, chunks: AsyncIterable<Uint8Array>, events: XmlEvents, signal?: AbortSignal): Promise<boolean> {
  const feed = await XmlFeed.open(part, events);
  for await (const chunk of chunks) {
    feed.write(chunk);
    if (events.done) return true;
  }
  if (signal?.aborted) return false;
  feed.end();
  return true;
}
