#!/usr/bin/env node
/**
 * Writes the bundled seed catalog, fixtures/seed/<collection>.csv, from a fixed PRNG seed, so the
 * files are byte-for-byte reproducible: `node scripts/make-fixtures.mjs` (add `--check` to fail
 * when the committed files differ from what this script generates).
 *
 * What the data deliberately contains, because importers break on it: commas, double quotes,
 * embedded newlines, leading/trailing spaces, accents, Japanese, Greek and Arabic text, leading
 * zeros in UPC/ISRC/catalog numbers, JSON (jsonb) cells, empty cells (column defaults), and valid
 * foreign keys from releases to labels/genres/subgenres. Every id is a fixed v4-shaped uuid.
 *
 * The links (docs/links.md): releases list their tracks, as [{id, position[, disc]}] or as
 * `;`-separated ISRCs; tracks credit artists in the six roles, by id, by stage name, or by name
 * alone for people outside the catalog. And the data-quality problems `catalog check` finds and
 * `catalog check --fix` repairs (docs/check.md), next to a few it reports but cannot fix.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'fixtures', 'seed');

// mulberry32: tiny, deterministic, good enough for test data.
/** A UPC-A: eleven digits and their GTIN check digit (catalog check verifies it). */
function withCheckDigit(digits) {
  let sum = 0;
  for (let i = digits.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += Number(digits[i]) * w;
  return `${digits}${(10 - (sum % 10)) % 10}`;
}

function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(20240531);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const hex = (n) => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');

/** A fixed v4-shaped uuid whose first group names the collection (readable in test failures). */
function uuid(prefix) {
  return `${prefix}-${hex(4)}-4${hex(3)}-${pick(['8', '9', 'a', 'b'])}${hex(3)}-${hex(12)}`;
}

/** Fixed timestamps, one minute apart from a fixed origin. */
let tick = 0;
function stamp() {
  const t = new Date(Date.UTC(2024, 0, 15, 9, 0, 0) + tick++ * 60_000 + int(0, 999));
  // as PostgreSQL prints timestamptz in JSON: trailing zeros of the fraction dropped
  return t.toISOString().replace(/\.?0+Z$/, 'Z').replace('Z', '+00:00');
}

function csvCell(v) {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function csv(columns, rows) {
  const lines = [columns.join(',')];
  for (const r of rows) lines.push(columns.map((c) => csvCell(r[c])).join(','));
  return lines.join('\n') + '\n';
}

// ---------------------------------------------------------------- countries, languages

const COUNTRY_NAMES = [
  'Argentina', 'Australia', 'Brasil', 'Canada', "Côte d'Ivoire", 'Deutschland', 'España', 'France', 'Ελλάδα',
  'India', 'Ireland', 'Italia', '日本', 'Korea, Republic of', 'México', 'Nederland', 'New Zealand', 'Nigeria',
  'Norge', 'Polska', 'Portugal', 'المملكة المغربية', 'Sverige', 'Türkiye', 'United Kingdom', 'United States',
];
const LANGUAGE_NAMES = [
  'English', 'Español', 'Français', 'Deutsch', 'Português', 'Italiano', '日本語', 'Ελληνικά', 'العربية',
  'Nederlands', 'Svenska', 'Polski', 'Türkçe', '한국어', 'Yorùbá', 'Instrumental (no lyrics)',
];
const countries = COUNTRY_NAMES.map((name) => ({ id: uuid('c0000001'), name, created: stamp(), updated: stamp() }));
const languages = LANGUAGE_NAMES.map((name) => ({ id: uuid('1a000001'), name, created: stamp(), updated: stamp() }));

// ---------------------------------------------------------------- genres, subgenres

const GENRE_TREE = {
  House: ['Deep House', 'Tech House', 'Afro House', 'Progressive House'],
  Techno: ['Minimal Techno', 'Hard Techno', 'Dub Techno', 'Detroit Techno'],
  'Drum & Bass': ['Liquid', 'Neurofunk', 'Jump-Up'],
  Jazz: ['Bebop', 'Free Jazz', 'Jazz, Fusion'],
  'Hip-Hop': ['Boom Bap', 'Trap', 'Lo-Fi "Chill" Beats'],
  Ambient: ['Dark Ambient', 'Drone', '環境音楽'],
  Rock: ['Post-Rock', 'Shoegaze', 'Έντεχνο Rock'],
  Classical: ['Baroque', 'Minimalism'],
  'World Music': ['Rebetiko', 'Raï', 'طرب', 'Highlife'],
  Pop: ['Synth-Pop', 'J-Pop', 'K-Pop'],
  Electronica: ['IDM', 'Downtempo'],
  Soul: ['Neo Soul', 'Northern Soul'],
};
const genres = Object.keys(GENRE_TREE).map((name) => ({ id: uuid('9e000001'), name, created: stamp(), updated: stamp() }));
const subgenres = genres.flatMap((g) =>
  GENRE_TREE[g.name].map((name) => ({ id: uuid('5b000001'), name, genre: g.name, genre_id: g.id, created: stamp(), updated: stamp() })),
);

// ---------------------------------------------------------------- labels

const LABEL_NAMES = [
  'Northern Lights Recordings', 'Smith, Jones & Co.', 'The "Quiet" Room', 'Éditions Mélodie', 'Ελληνικά Ρεκόρντς',
  '東京レコード', 'دار الموسيقى', '  Spaced Out Records  ', "O'Malley's Music", 'Kraftwerk Klänge', 'Lo-Fi Lab',
  'Midnight, Inc.', 'Café Tacvba Discos', 'Ωmega Sound', 'さくら Music', 'Bass Culture', 'Warp Drive',
  'Ninja Tunes (not that one)', 'Blue Note-ish', 'Møller Musik', 'Złota Płyta', 'İstanbul Plak', 'Sub Pop Up',
  'Label\nWith Newline', 'Zero Gravity',
];
const labels = LABEL_NAMES.map((name) => ({ id: uuid('1ab00001'), name, created: stamp(), updated: stamp() }));

// ---------------------------------------------------------------- artists

const FIRST = ['Ana', 'Björn', 'Chloé', 'Dmitri', 'Eleni', 'Fatima', 'Giorgos', 'Hana', 'Ígor', 'Jürgen', 'Kenji', 'Lúcia', 'Mariam', 'Noé', 'Oğuz', 'Priya', 'Quentin', 'Rania', 'Søren', 'Takumi', 'Úrsula', 'Václav', 'Wen', 'Yara', 'Zoë'];
const LAST = ['Adeyemi', 'Bianchi', 'Castillo', 'Dubois', 'Eriksen', 'Fontaine', 'García', 'Haddad', 'Ishikawa', 'Jansen', 'Kowalski', 'Lindqvist', "O'Brien", 'Papadopoulos', 'Müller', 'Nakamura', 'Østergaard', 'Rossi', 'Schäfer', 'Tanaka'];
const STAGE = [
  'DJ Quasar', 'The "Night" Shift', 'Smith, Jones & Partners', 'Μελωδία', '夜明け', 'نور', 'Ω Collective', 'Señor Coconut Jr.',
  ' Leading Space', 'Trailing Space ', 'Café del Mar-ish', 'MC Ümlaut', "Rock 'n' Roll Ghost", 'Null', 'NULL', 'true', '0042',
];
const CITIES = ['Berlin', 'Αθήνα', '東京', 'القاهرة', 'São Paulo', 'Montréal', 'Reykjavík', 'Kraków', 'Lagos', 'Detroit', 'London, Ontario'];
const ANR = ['Ana Ruiz', 'Ben Okafor', 'Chen Wei', ''];

const artists = [];
for (let i = 0; i < 60; i++) {
  const first = pick(FIRST);
  const last = pick(LAST);
  const stage = i < STAGE.length ? STAGE[i] : `${pick(['DJ ', 'MC ', '', '', 'The '])}${first} ${last}${pick(['', '', ' & Friends', ' Trio'])}`;
  const signed = i % 5 === 4 ? '' : pick(['true', 'false']);
  const hasBio = i % 3 !== 2;
  artists.push({
    id: uuid('a0000001'),
    created: stamp(),
    updated: stamp(),
    stage_name: stage,
    legal_name: `${first} ${last}`,
    biography: hasBio
      ? pick([
          `${first} grew up in ${pick(CITIES)}.\nStarted producing at ${int(12, 19)}.`,
          `Known for "hypnotic" sets, long blends, and 4/4 patience.`,
          `Bio, with commas, and a quote: "music first".`,
          `Ο ${first} γεννήθηκε στην Αθήνα.`,
          `${first}は東京出身のプロデューサーです。`,
          `ولد ${first} في القاهرة.`,
          `Line one\nLine two\n\nLine four after a blank line`,
        ])
      : '',
    city: pick(CITIES),
    country: pick(COUNTRY_NAMES),
    address: i % 4 === 0 ? `${int(1, 200)} ${pick(['Rue de la Paix', 'Main St., Apt 4', 'Οδός Ερμού', '銀座 1-2-3'])}` : '',
    birthdate: i % 6 === 5 ? '' : `19${int(60, 99)}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`,
    email: `${first.toLowerCase().normalize('NFD').replace(/[^a-z]/g, '')}.${i}@example.com`,
    phone: pick(['+44 020 7946 0000', '0049 30 123456', '+81 03-1234-5678', '+30 210 000 0000', '']),
    website: i % 2 === 0 ? `https://artist${i}.example.com/` : '',
    spotify: i % 3 === 0 ? `https://open.spotify.com/artist/${hex(22)}` : '',
    soundcloud: i % 4 === 1 ? `https://soundcloud.com/artist-${i}` : '',
    instagram: i % 5 === 2 ? `@artist_${i}` : '',
    anr: pick(ANR),
    is_signed: signed,
    org_id: `org-${String(int(1, 3)).padStart(3, '0')}`,
    soundcharts_id: i % 2 === 1 ? `sc-${String(i).padStart(6, '0')}` : '',
    metadata: i % 4 === 3 ? '' : { source: 'fixture', tags: [pick(['live', 'studio', 'dj']), pick(['vinyl', 'digital'])], note: i % 7 === 0 ? 'quote " and comma ,' : null },
    streaming: i % 3 === 0 ? { monthly_listeners: int(100, 500000), platforms: ['spotify', 'apple_music'] } : '',
    followers: i % 5 === 0 ? { instagram: int(0, 90000), x: int(0, 20000) } : '',
  });
}

// ---------------------------------------------------------------- releases

const TITLE_WORDS = ['Night', 'Drive', 'Echoes', 'Ωκεανός', '夜光', 'حلم', 'Blue', 'Café', 'Static', 'Bloom', 'Signal', 'Ruins', 'Neón', 'Tide'];
const releases = [];
for (let i = 0; i < 80; i++) {
  const label = pick(labels);
  const genre = pick(genres);
  const subs = subgenres.filter((s) => s.genre_id === genre.id);
  const sub = i % 7 === 6 ? null : pick(subs);
  const title =
    i === 0 ? 'Untitled, "Final" Mix'
    : i === 1 ? 'Two\nLines'
    : i === 2 ? '  padded title  '
    : `${pick(TITLE_WORDS)} ${pick(TITLE_WORDS)}${pick(['', '', ' EP', ' (Deluxe)', ', Vol. 2'])}`;
  releases.push({
    id: uuid('e0000001'),
    created: stamp(),
    updated: stamp(),
    catalog_number: `${pick(['NLR', 'TQR', 'EM', 'ΕΡ'])}${String(int(1, 999)).padStart(5, '0')}`,
    genre: genre.name,
    subgenre: sub ? sub.name : '',
    label: label.name,
    release_title: title,
    release_version: pick(['', 'Original', 'Remastered 2024', 'Édition limitée']),
    upc_code: withCheckDigit(String(int(0, 99_999_999)).padStart(11, '0')),
    language: pick(LANGUAGE_NAMES),
    slug: `release-${String(i).padStart(3, '0')}`,
    description: pick(['', 'A record about the sea.\nAnd the night.', 'Includes "bonus" tracks, remixes, etc.', 'Περιγραφή στα ελληνικά.', 'アルバムの説明。', 'وصف الألبوم.']),
    bandcamp: i % 3 === 0 ? `https://label${i}.bandcamp.com/album/r${i}` : '',
    vinyl: pick(['', '12"', '2x12", 180g', '7"']),
    org_id: `org-${String(int(1, 3)).padStart(3, '0')}`,
    is_compilation: i % 9 === 0 ? 'true' : i % 9 === 1 ? '' : 'false',
    release_date: i % 10 === 9 ? '' : `20${String(int(0, 24)).padStart(2, '0')}-${String(int(1, 12)).padStart(2, '0')}-${String(int(1, 28)).padStart(2, '0')}`,
    label_id: i % 11 === 10 ? '' : label.id,
    genre_id: genre.id,
    subgenre_id: sub ? sub.id : '',
    cover_artwork: i % 2 === 0 ? { url: `https://img.example.com/${hex(8)}.jpg`, width: 3000, height: 3000 } : '',
    contracts: i % 5 === 0 ? [{ party: label.name, signed: `2023-0${int(1, 9)}-1${int(0, 9)}` }] : '',
  });
}

// ---------------------------------------------------------------- tracks

const MIX = ['', 'Original Mix', 'Extended Mix', 'Radio Edit', 'Dub', 'Remix, Part 2'];
const EXPLICIT = ['clean', 'explicit', 'not_explicit', ''];
const tracks = [];
for (let i = 0; i < 200; i++) {
  const genre = pick(genres);
  const subs = subgenres.filter((s) => s.genre_id === genre.id);
  const primary = pick(artists);
  const featuring = i % 4 === 0 ? pick(artists) : null;
  tracks.push({
    id: uuid('70000001'),
    created: stamp(),
    updated: stamp(),
    audio_file: `s3://catalog-audio/${String(i).padStart(6, '0')}.wav`,
    explicit_status: pick(EXPLICIT),
    genre: genre.name,
    subgenre: pick(subs).name,
    mix_version: pick(MIX),
    recording_location: pick(['', 'Studio A, Berlin', 'Αθήνα', '東京スタジオ', 'Home "bedroom" studio']),
    track_title:
      i === 0 ? 'Track, with "everything"\nand a newline'
      : i === 1 ? '  leading and trailing  '
      : `${pick(TITLE_WORDS)} ${pick(['', 'No. ', 'Part '])}${int(1, 12)}`,
    recording_year: i % 8 === 7 ? '' : String(int(1965, 2024)),
    // ISRC: country + registrant + year + 5-digit designation, zero-padded (leading zeros kept as text).
    isrc_code: `${pick(['US', 'GB', 'JP', 'GR', 'DE'])}${pick(['A1B', 'Z9Q', '0AB', '00C'])}${String(int(0, 24)).padStart(2, '0')}${String(int(1, 999)).padStart(5, '0')}`,
    lyrics: i % 6 === 0 ? 'yes' : '',
    lyrics_text: i % 6 === 0 ? pick(['La la la,\nla la "la".', 'Σ\'αγαπώ', '夜が明ける', 'يا ليل']) : '',
    primary_artists: [{ id: primary.id, name: primary.stage_name }],
    featuring_artists: featuring ? [{ id: featuring.id, name: featuring.stage_name }] : '',
    remix_artists: '',
    writer_artists: i % 3 === 0 ? [{ name: primary.legal_name, share: 50 }, { name: 'Co-Writer, Jr.', share: 50 }] : '',
  });
}

// ---------------------------------------------------------------- tracklists and credits
//
// Drawn after every row above, so the draws those rows were made from are the same as before
// releases listed their tracks (tests hold some of their values); the tracks' credits are made
// again here, with the release's artist as the primary one.

/** A release's running order as the interface stores it: [{id, position[, disc]}]. */
const trackList = (ts, discOf = () => 1) => {
  const next = new Map();
  return ts.map((t) => {
    const disc = discOf(t);
    const position = (next.get(disc) ?? 0) + 1;
    next.set(disc, position);
    return disc === 1 ? { id: t.id, position } : { id: t.id, position, disc };
  });
};
const credit = (a, extra = {}) => ({ id: a.id, name: a.stage_name, ...extra });

// ISRCs more than one track has (a chance collision of the draws above, kept: `catalog check`
// reports it as the one error no fix repairs): a release cannot name those tracks by ISRC.
const isrcCount = new Map();
for (const t of tracks) isrcCount.set(t.isrc_code, (isrcCount.get(t.isrc_code) ?? 0) + 1);
const uniqueIsrc = (t) => isrcCount.get(t.isrc_code) === 1;

// Releases with no date and not a compilation are announced, their tracklists not delivered yet:
// no tracks. The others take the tracks in order, one artist's record each: mostly singles (1–2
// tracks) and EPs (3–5; a title with "EP" is one), some albums (7–12; from 9 tracks on, two
// discs). Compilations then gather tracks already on other releases. The last few tracks are on
// no release (unreleased).
const announced = (r) => r.release_date === '' && r.is_compilation !== 'true';
const originals = releases.filter((r) => !announced(r) && r.is_compilation !== 'true');
const UNRELEASED = 6;
const sizes = originals.map((r) => {
  const kind = r.release_title.endsWith(' EP') ? 'ep' : pick(['single', 'single', 'single', 'single', 'single', 'ep', 'ep', 'album']);
  return kind === 'single' ? int(1, 2) : kind === 'ep' ? int(3, 5) : int(7, 12);
});
// the tracks are the budget (UNRELEASED of them at least left over): the longest lists give up a
// track until they fit
while (sizes.reduce((a, b) => a + b, 0) > tracks.length - UNRELEASED) sizes[sizes.indexOf(Math.max(...sizes))]--;
let nextTrack = 0;
const mainArtistOf = new Map(); // track id → the artist of its release
originals.forEach((r, k) => {
  const size = sizes[k];
  const own = tracks.slice(nextTrack, nextTrack + size);
  nextTrack += size;
  const artist = pick(artists);
  for (const t of own) mainArtistOf.set(t.id, artist);
  const secondDisc = size >= 9 ? Math.floor(size / 3) : 0;
  r.tracks = trackList(own, (t) => (own.indexOf(t) >= size - secondDisc ? 2 : 1));
  // a distributor's sheet lists tracks by ISRC, `;`-separated: every third release (when no track
  // of it shares its ISRC), which the catalog resolves to the same [{id, position}]
  if (k % 3 === 1 && own.every(uniqueIsrc) && secondDisc === 0) r.tracks = own.map((t) => t.isrc_code).join(';');
});
const released = tracks.slice(0, nextTrack);
for (const r of releases) {
  if (r.is_compilation !== 'true') continue;
  const picked = new Set();
  const size = int(6, 10);
  while (picked.size < size) picked.add(pick(released));
  r.tracks = trackList([...picked]);
}
for (const r of releases) r.tracks ??= '';

// Credits in every role: the release's artist first (a duet now and then), guests, remixers on
// remixes and dubs, writers with shares (the artist by id, outside writers by name alone: they are
// not in the catalog), session players and engineers with their roles. A few cells credit by stage
// name, as another system's export does; the catalog resolves them to {id, name}.
const OUTSIDE_WRITERS = ['Co-Writer, Jr.', 'Marisol Vega', 'Θοδωρής Καλλέργης', '佐藤 花子', 'Kwame Mensah'];
const ENGINEERS = ['Studio Hands Ltd.', 'Ines Duarte', 'Ólafur Pétursson'];
const INSTRUMENTS = ['vocals', 'guitar', 'keys', 'drums', 'saxophone', 'strings'];
const BY_NAME = ['DJ Quasar', 'Μελωδία', '夜明け', 'Ω Collective', 'Señor Coconut Jr.'];
tracks.forEach((t, i) => {
  const main = mainArtistOf.get(t.id) ?? pick(artists);
  const other = () => {
    let a = pick(artists);
    while (a === main) a = pick(artists);
    return a;
  };
  t.primary_artists = i % 10 === 3 ? [credit(main), credit(other())] : [credit(main)];
  if (t.featuring_artists === '' && i % 25 === 11) t.featuring_artists = BY_NAME[Math.floor(i / 25) % BY_NAME.length];
  t.remix_artists = t.mix_version === 'Dub' || t.mix_version === 'Remix, Part 2' ? [credit(other())] : '';
  t.writer_artists =
    i % 3 === 0 ? [credit(main, { role: 'composer', share: 50 }), { name: pick(OUTSIDE_WRITERS), role: 'lyricist', share: 50 }]
    : i % 3 === 1 ? [credit(main, { role: 'composer', share: 100 })]
    : '';
  t.performer_artists = i % 5 === 1 ? [credit(other(), { role: pick(INSTRUMENTS) })] : '';
  t.engineer_artists = i % 4 === 2 ? [{ name: pick(ENGINEERS), role: pick(['mixing', 'mastering']) }] : i % 8 === 3 ? [credit(other(), { role: 'mixing' })] : '';
});

// ---------------------------------------------------------------- data-quality problems
//
// What real catalogs have, each found by `catalog check` and repaired by `catalog check --fix`
// (besides the stray spaces above and the releases with a label name but no label_id):
// - isrc-format: ISRCs as a distributor's form printed them, with hyphens, spaces, lower case
// - upc-format: a barcode copied with the spaces printed under it, and one through a spreadsheet
//   that dropped its leading zero
// - consistency: a release moved to another label whose label text still names the old one, and
//   a genre typed by hand ("Hip Hop" while genre_id is Hip-Hop)
// - whitespace: a doubled space in a track title
const onIsrcRelease = new Set(releases.filter((r) => typeof r.tracks === 'string' && r.tracks).flatMap((r) => r.tracks.split(';')));
const fixableIsrc = tracks.filter((t, i) => i > 1 && uniqueIsrc(t) && !onIsrcRelease.has(t.isrc_code));
const spaced = (c) => `${c.slice(0, 2)}-${c.slice(2, 5)}-${c.slice(5, 7)}-${c.slice(7)}`;
fixableIsrc[3].isrc_code = spaced(fixableIsrc[3].isrc_code).toLowerCase();
fixableIsrc[17].isrc_code = spaced(fixableIsrc[17].isrc_code);
fixableIsrc[40].isrc_code = spaced(fixableIsrc[40].isrc_code).replaceAll('-', ' ');
fixableIsrc[66].isrc_code = fixableIsrc[66].isrc_code.toLowerCase();

const upc = (r) => r.upc_code;
releases[5].upc_code = `${upc(releases[5]).slice(0, 1)} ${upc(releases[5]).slice(1, 6)} ${upc(releases[5]).slice(6, 11)} ${upc(releases[5]).slice(11)}`;
releases[23].upc_code = withCheckDigit(`0${int(1_000_000_000, 9_999_999_999)}`).slice(1);

const moved = releases.find((r, i) => i > 3 && r.label_id !== '' && r.label_id !== labels[0].id && r.label.trim() === r.label);
moved.label = labels[0].name;
const hipHop = genres.find((g) => g.name === 'Hip-Hop');
const typed = releases.find((r, i) => i > 3 && r.genre_id === hipHop.id);
typed.genre = 'Hip Hop';

const doubled = tracks.find((t, i) => i > 3 && / /.test(t.track_title) && !t.track_title.includes('  '));
doubled.track_title = doubled.track_title.replace(' ', '  ');

// ---------------------------------------------------------------- write

const TS = ['created', 'updated'];
const files = {
  countries: csv(['id', 'name', ...TS], countries),
  languages: csv(['id', 'name', ...TS], languages),
  genres: csv(['id', 'name', ...TS], genres),
  subgenres: csv(['id', 'name', 'genre', ...TS], subgenres),
  labels: csv(['id', 'name', ...TS], labels),
  artists: csv(Object.keys(artists[0]), artists),
  releases: csv(Object.keys(releases[0]), releases),
  tracks: csv(Object.keys(tracks[0]), tracks),
};

const check = process.argv.includes('--check');
let stale = 0;
mkdirSync(OUT, { recursive: true });
for (const [name, text] of Object.entries(files)) {
  const path = join(OUT, `${name}.csv`);
  if (check) {
    if (!existsSync(path) || readFileSync(path, 'utf8') !== text) {
      console.error(`stale: ${path}`);
      stale++;
    }
  } else {
    writeFileSync(path, text);
  }
}
if (check && stale) process.exit(1);
if (!check) {
  const counts = Object.entries({ countries, languages, genres, subgenres, labels, artists, releases, tracks }).map(([k, v]) => `${k} ${v.length}`);
  console.log(`wrote ${OUT}: ${counts.join(', ')}`);
}
