import { CHANGELOG, type InterfaceVersion } from '../schema/changelog.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The interface changelog as an Atom 1.0 feed (RFC 4287): one entry per interface version, each
 * change a list item marked breaking or not, with `category` terms a program can read.
 */
export function changelogAtom(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const updated = `${CHANGELOG[0].date}T00:00:00Z`;
  const entries = CHANGELOG.map((v) => entry(v, base)).join('\n');
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Music Catalog Service interface changelog</title>
  <id>urn:catalog:interface:changelog</id>
  <updated>${updated}</updated>
  <link rel="self" type="application/atom+xml" href="${esc(base)}/"/>
  <link rel="alternate" type="application/openapi+json" href="${esc(base)}/"/>
  <author><name>catalog</name></author>
${entries}
</feed>
`;
}

function entry(v: InterfaceVersion, base: string): string {
  const items = v.changes
    .map((c) => `<li>[${c.breaking ? 'breaking' : 'non-breaking'}] ${esc(c.change)} (${esc(c.appliesTo)})</li>`)
    .join('');
  const breaking = v.changes.some((c) => c.breaking);
  return `  <entry>
    <title>Interface ${esc(v.version)}</title>
    <id>urn:catalog:interface:${esc(v.version)}</id>
    <updated>${v.date}T00:00:00Z</updated>
    <link rel="alternate" href="${esc(base)}/"/>
    <summary>${esc(v.summary)}</summary>
    <category term="version:${esc(v.version)}"/>${breaking ? '\n    <category term="breaking"/>' : ''}
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><ul>${items}</ul></div></content>
  </entry>`;
}
