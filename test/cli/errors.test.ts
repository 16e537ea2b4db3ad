import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { describeError, EXIT, exitCodeFor, NotFoundError, PartialFailure, UsageError } from '../../src/cli/errors.js';
import { ConnectionError, ServiceError } from '../../src/client/errors.js';
import { ExportError } from '../../src/client/pages.js';
import { GrammarError } from '../../src/grammar/errors.js';
import { style } from '../../src/io/style.js';

const plain = style(false);
const service = (status: number, body: object) => ServiceError.fromResponse(status, JSON.stringify(body), 'GET http://x/labels');

describe('the exit-code mapper', () => {
  it('maps each kind of failure to its documented code', () => {
    expect(exitCodeFor(new UsageError('bad flag'))).toBe(EXIT.usage);
    expect(exitCodeFor(new CommanderError(1, 'commander.unknownCommand', 'unknown command'))).toBe(2);
    expect(exitCodeFor(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'))).toBe(0);
    expect(exitCodeFor(new GrammarError('"failed to parse filter (x)" (line 1, column 1)', 'unexpected'))).toBe(2);
    expect(exitCodeFor(new NotFoundError('artist x not found'))).toBe(1);
    // a paged read (list --all, export) refused for the token answers as any other request does
    expect(exitCodeFor(new ExportError('reading tracks failed: JWT expired', 401, 'PGRST301'))).toBe(EXIT.auth);
    expect(exitCodeFor(new ExportError('reading tracks failed', 403, '42501'))).toBe(EXIT.auth);
    expect(exitCodeFor(new ExportError('reading tracks failed', 500, 'XX000'))).toBe(EXIT.service);
    expect(exitCodeFor(service(400, { code: '42703', message: 'column x does not exist' }))).toBe(1);
    expect(exitCodeFor(service(409, { code: '23505', message: 'duplicate key' }))).toBe(1);
    expect(exitCodeFor(new ConnectionError('http://127.0.0.1:9', 'ECONNREFUSED'))).toBe(1);
    expect(exitCodeFor(new PartialFailure('3 rows rejected'))).toBe(3);
    expect(exitCodeFor(service(401, { code: 'PGRST301', message: 'JWT expired' }))).toBe(4);
    expect(exitCodeFor(service(403, { code: '42501', message: 'permission denied for table labels' }))).toBe(4);
    expect(exitCodeFor(new Error('boom'))).toBe(1);
  });
});

describe('error messages', () => {
  it('show a service error with its code, status, details and hint', () => {
    const lines = describeError(service(409, { code: '23503', message: 'insert or update violates foreign key', details: 'Key (label_id)=(x) is not present', hint: null }), plain);
    expect(lines).toEqual(['error: insert or update violates foreign key (23503, HTTP 409)', '  details: Key (label_id)=(x) is not present']);
  });

  it('add a credentials hint to 401 and 403', () => {
    expect(describeError(service(401, { code: 'PGRST302', message: 'Anonymous access is disabled' }), plain).join('\n')).toMatch(/pass --token/);
    expect(describeError(service(401, { code: 'PGRST301', message: 'JWT expired' }), plain, { tokenGiven: true }).join('\n')).toMatch(/rejected the token/);
    expect(describeError(service(403, { code: '42501', message: 'permission denied' }), plain).join('\n')).toMatch(/role may not do this/);
  });

  it('name the URL and suggest catalog serve when the service is unreachable', () => {
    const text = describeError(new ConnectionError('http://127.0.0.1:9', 'ECONNREFUSED'), plain).join('\n');
    expect(text).toMatch(/cannot reach http:\/\/127\.0\.0\.1:9/);
    expect(text).toMatch(/catalog serve/);
  });

  it('read bodies that are not PostgREST errors', () => {
    expect(ServiceError.fromResponse(404, '{}').message).toBe('not found');
    expect(ServiceError.fromResponse(502, '<html>Bad Gateway</html>').message).toBe('<html>Bad Gateway</html>');
    const gw = ServiceError.fromResponse(401, '{"message":"No API key found in request","hint":"No `apikey` request header or url param was found."}');
    expect([gw.code, gw.message, gw.hint]).toEqual([null, 'No API key found in request', 'No `apikey` request header or url param was found.']);
  });

  it('show usage errors with their hint', () => {
    expect(describeError(new UsageError('unknown field', 'fields: a, b'), plain)).toEqual(['error: unknown field', '  hint: fields: a, b']);
  });
});
