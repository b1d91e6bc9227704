// Scrubbing text a pod wrote before the product keeps it: shared/application/sensitive-text.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { REDACTED, redactText } from '../../../shared/application/sensitive-text.js';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaGVjayJ9.c2lnbmF0dXJl';

void describe('redactText', () => {
  const cases: readonly [string, string, readonly string[], string][] = [
    ['a configured value', 'token abcdefgh12 end', ['abcdefgh12'], `token ${REDACTED} end`],
    ['every occurrence', 'x=abcdefgh12 y=abcdefgh12', ['abcdefgh12'], `x=${REDACTED} y=${REDACTED}`],
    ['values under 8 characters stay', 'exit code 1: true', ['1', 'true'], 'exit code 1: true'],
    ['a JWT', `got ${JWT} from IMDS`, [], `got ${REDACTED} from IMDS`],
    ['a bearer token', 'Authorization: Bearer abc.def-ghi', [], `Authorization: ${REDACTED}`],
    [
      'an account key in a connection string',
      'DefaultEndpointsProtocol=https;AccountKey=abc+/=;EndpointSuffix=core',
      [],
      `DefaultEndpointsProtocol=https;${REDACTED};EndpointSuffix=core`,
    ],
    [
      'a SAS signature',
      'https://a.blob/x?sv=1&sig=abc%2Bdef&se=2',
      [],
      `https://a.blob/x?sv=1${REDACTED}&se=2`,
    ],
    [
      'a private key block',
      'key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----\ndone',
      [],
      `key:\n${REDACTED}\ndone`,
    ],
    [
      'ordinary output untouched',
      'exit code 3: Error: /dev/kvm missing',
      ['configured-value'],
      'exit code 3: Error: /dev/kvm missing',
    ],
  ];
  for (const [name, text, sensitive, expected] of cases) {
    void it(name, () => assert.equal(redactText(text, sensitive), expected));
  }
});
