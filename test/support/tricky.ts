/** Text that breaks naive writers: separators, quotes, newlines, leading zeros, other scripts. */
export const TRICKY = [
  'Blue, "Note" Records',
  'line one\nline two\r\nline three',
  '007',
  '  padded  ',
  'tab\there',
  'back\\slash',
  '東京 レコード',
  'Ελληνικά',
  'مرحبا',
  '😀 emoji',
  '',
  "it's",
  '- starts with dash: yes',
  'null',
  'true',
];
