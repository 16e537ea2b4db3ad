import { describe, expect, it } from 'vitest';
import { checkSingleHeader, detectDelimiter, parseDelimiter } from '../../../src/import/readers/delimiter.js';
import { parseDateFormat, unreadableDate } from '../../../src/import/shape/date-format.js';

describe('delimiters', () => {
  it('detects , ; tab | from the header line; .tsv means tab; the flag wins', () => {
    expect(detectDelimiter('stage_name,city,birthdate', 'a.csv')).toBe(',');
    expect(detectDelimiter('stage_name;city;birthdate;is_signed', 'a.csv')).toBe(';');
    expect(detectDelimiter('stage_name\tcity', 'a.csv')).toBe('\t');
    expect(detectDelimiter('stage_name|city', 'a.csv')).toBe('|');
    expect(detectDelimiter('"a;b",c,d', 'a.csv')).toBe(','); // a ; inside quotes does not count
    expect(detectDelimiter('name', 'a.tsv')).toBe('\t');
    expect(detectDelimiter('a;b;c', 'a.csv', ',')).toBe(',');
    expect(detectDelimiter('a,b', 'a.csv', 'tab')).toBe('\t');
  });

  it('parses the flag and refuses what cannot be a delimiter', () => {
    expect(parseDelimiter('\\t')).toBe('\t');
    expect(parseDelimiter('semicolon')).toBe(';');
    expect(() => parseDelimiter(';;')).toThrow(/--delimiter takes one character/);
    expect(() => parseDelimiter('"')).toThrow(/--delimiter/);
  });

  it('a single header name holding another delimiter names it and the flag', () => {
    expect(() => checkSingleHeader(['stage_name;city;birthdate'], 'a.csv', ',')).toThrow(
      /a.csv: the header is one name, "stage_name;city;birthdate", which holds semicolons: the file looks semicolon-separated, pass --delimiter ';'/,
    );
    expect(() => checkSingleHeader(['a\tb'], 'a.csv', ',')).toThrow(/--delimiter tab/);
    expect(() => checkSingleHeader(['stage_name'], 'a.csv', ',')).not.toThrow();
    expect(() => checkSingleHeader(['a', 'b;c'], 'a.csv', ',')).not.toThrow();
  });
});

describe('--date-format', () => {
  it('converts DD/MM/YYYY, MM/DD/YYYY, DD.MM.YYYY to ISO; ISO passes as it is', () => {
    expect(parseDateFormat('DD/MM/YYYY').convert('03/04/2024')).toEqual({ iso: '2024-04-03' });
    expect(parseDateFormat('MM/DD/YYYY').convert('03/04/2024')).toEqual({ iso: '2024-03-04' });
    expect(parseDateFormat('dd.mm.yyyy').convert('3.4.2024')).toEqual({ iso: '2024-04-03' });
    expect(parseDateFormat('YYYY/MM/DD').convert('2024/12/31')).toEqual({ iso: '2024-12-31' });
    expect(parseDateFormat('DD/MM/YYYY').convert('2024-04-03')).toEqual({ iso: '2024-04-03' });
  });

  it('a cell that is not a date in the format is an error naming it, never a guess', () => {
    expect(parseDateFormat('DD/MM/YYYY').convert('31/02/2024')).toEqual({ error: expect.stringMatching(/"31\/02\/2024" is not a date/) });
    expect(parseDateFormat('DD/MM/YYYY').convert('03-04-2024')).toEqual({ error: '"03-04-2024" is not a date written DD/MM/YYYY' });
    expect(parseDateFormat('MM/DD/YYYY').convert('13/01/2024')).toEqual({ error: expect.stringMatching(/not a date/) });
  });

  it('refuses formats without a day, month and four-digit year', () => {
    expect(() => parseDateFormat('DD/MM')).toThrow(/needs a day, a month and a four-digit year/);
    expect(() => parseDateFormat('DD/MM/YY')).toThrow(/is not a date format/);
    expect(() => parseDateFormat('MM/MM/YYYY')).toThrow(/once each/);
  });

  it('without the flag, a day-month date is refused asking for it', () => {
    expect(unreadableDate('03/04/2024', 'birthdate', 7)).toMatch(
      /line 7: the date "03\/04\/2024" in column "birthdate" could be day 3 of month 4 or month 3, day 4: .*--date-format DD\/MM\/YYYY or --date-format MM\/DD\/YYYY/,
    );
    expect(unreadableDate('03.04.2024', 'birthdate', 2)).toMatch(/--date-format DD\.MM\.YYYY or --date-format MM\.DD\.YYYY\.$/);
    // one reading only: left to the row's own reject, as before
    expect(unreadableDate('25.12.2024', 'birthdate', 2)).toBeNull();
    expect(unreadableDate('05/05/2024', 'birthdate', 2)).toBeNull();
    expect(unreadableDate('2024-04-03', 'birthdate', 2)).toBeNull();
    expect(unreadableDate('', 'birthdate', 2)).toBeNull();
  });
});
