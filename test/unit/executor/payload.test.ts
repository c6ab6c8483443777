// chai 6 ships no type declarations and @types/chai is not installed (yet); expect is `any` until then.
import { expect } from 'chai';
import fc from 'fast-check';
import { AppError } from '../../../shared/errors.ts';
import { bodyKind, validatePayload } from '../../../shared/payload.ts';

function rejection(payload: string, method: string): AppError {
  try {
    validatePayload(payload, method);
  } catch (e) {
    expect(e).to.be.instanceOf(AppError);
    return e as AppError;
  }
  throw new Error(`payload ${JSON.stringify(payload)} for ${method} was accepted`);
}

describe('validatePayload', () => {
  it('accepts a query string for every method', () => {
    for (const method of ['GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH']) {
      expect(validatePayload('a=1&b=two', method)).to.deep.equal({ kind: 'query' });
    }
  });

  it('accepts JSON objects and arrays for POST, PUT and PATCH', () => {
    expect(validatePayload('{"a":1}', 'POST')).to.deep.equal({ kind: 'json' });
    expect(validatePayload('[1,2]', 'put')).to.deep.equal({ kind: 'json' });
    expect(validatePayload('{\n  "a": 1\n}', 'PATCH')).to.deep.equal({ kind: 'json' });
  });

  it('treats a string with a line break as JSON, so it must parse', () => {
    expect(validatePayload('\n42\n', 'POST')).to.deep.equal({ kind: 'json' });
    const e = rejection('a=1\nb=2', 'POST');
    expect(e.kind).to.equal('INVALID_PARAMETER');
    expect(e.message).to.match(/^payload: .*valid JSON/);
  });

  it('rejects a string starting with { or [ that is not JSON', () => {
    expect(rejection('{a=1}', 'POST').message).to.match(/^payload: /);
    expect(rejection('[oops', 'PUT').message).to.match(/^payload: /);
    expect(rejection('  {"a":', 'POST').message).to.match(/^payload: /);
  });

  it('rejects JSON for GET, HEAD and DELETE, naming the method', () => {
    for (const method of ['GET', 'head', 'DELETE']) {
      const e = rejection('{"a":1}', method);
      expect(e.kind).to.equal('INVALID_PARAMETER');
      expect(e.message).to.match(/^payload: must be a query string/);
      expect(e.message).to.contain(method.toUpperCase());
    }
  });

  it('rejects a query string with control characters or a fragment', () => {
    expect(rejection('a=1\tb', 'GET').message).to.match(/^payload: .*control/);
    expect(rejection('a=1#frag', 'GET').message).to.match(/^payload: .*#/);
  });

  it('is lenient with what real clients send in a query string', () => {
    expect(validatePayload('name=José Smith&x=%20', 'GET')).to.deep.equal({ kind: 'query' });
    expect(validatePayload('', 'GET')).to.deep.equal({ kind: 'query' });
  });

  it('either returns a kind or throws an AppError, for any input', () => {
    fc.assert(
      fc.property(fc.string(), fc.constantFrom('GET', 'POST', 'HEAD', 'x', ''), (payload, method) => {
        try {
          const { kind } = validatePayload(payload, method);
          expect(['json', 'query']).to.include(kind);
        } catch (e) {
          expect(e).to.be.instanceOf(AppError);
        }
      }),
    );
  });
});

describe('bodyKind', () => {
  it('names JSON, query strings, and nothing for other text', () => {
    expect(bodyKind('{"a":1}')).to.equal('json');
    expect(bodyKind('a=1&b=2')).to.equal('query');
    expect(bodyKind('')).to.equal(null);
    expect(bodyKind('{broken')).to.equal(null);
    expect(bodyKind('line one\nline two')).to.equal(null);
  });
});
