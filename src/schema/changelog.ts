/** One change of the interface structure. */
export interface InterfaceChange {
  change: string;
  appliesTo: string;
  breaking: boolean;
}

/** One published version of the interface description. */
export interface InterfaceVersion {
  version: string;
  /** Day the version was recorded (ISO date). */
  date: string;
  summary: string;
  changes: InterfaceChange[];
}

const ALL = 'artists, countries, genres, labels, languages, releases, subgenres, tracks';

/** The interface changelog, newest first, as the interface description publishes it. */
export const CHANGELOG: readonly InterfaceVersion[] = [
  {
    version: '12.2.3',
    date: '2025-01-25',
    summary: '30 structure changes: 4 breaking, 26 modifications, 4 removals',
    changes: [
      {
        change: 'created and updated changed from type text to timestamp with time zone and became required',
        appliesTo: `responses of GET and bodies of POST and PATCH on ${ALL}`,
        breaking: true,
      },
      { change: 'query parameter slug removed', appliesTo: 'GET, PATCH, DELETE /artists', breaking: true },
      { change: 'property slug removed', appliesTo: 'GET response, POST and PATCH body of /artists', breaking: true },
      {
        change: 'added: soundcharts_id, metadata, streaming, followers, address, tracks, services',
        appliesTo: 'query parameters of GET, PATCH, DELETE /artists; properties of GET response, POST and PATCH body of /artists',
        breaking: false,
      },
      {
        change: 'added: label_id, genre_id, subgenre_id',
        appliesTo: 'query parameters of GET, PATCH, DELETE /releases; properties of GET response, POST and PATCH body of /releases',
        breaking: false,
      },
      { change: 'collection /users removed (GET, POST, PATCH, DELETE)', appliesTo: '/users', breaking: true },
      {
        change: 'added: computed field source_ids, the record\'s id in each source system as {"<source>": "<id>"}, not part of select=*; catalog serve also takes it in POST and PATCH bodies',
        appliesTo: `select, filters and order of GET, and bodies of POST and PATCH, on ${ALL}`,
        breaking: false,
      },
    ],
  },
];
