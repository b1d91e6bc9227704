import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { definedOnly } from '../../../shared/domain/optional.js';

void describe('definedOnly', () => {
  const cases: { name: string; fields: Record<string, unknown>; expected: Record<string, unknown> }[] = [
    { name: 'no fields', fields: {}, expected: {} },
    { name: 'all defined', fields: { a: 1, b: 'x' }, expected: { a: 1, b: 'x' } },
    { name: 'all undefined', fields: { a: undefined, b: undefined }, expected: {} },
    { name: 'some undefined', fields: { a: 1, b: undefined, c: 'z' }, expected: { a: 1, c: 'z' } },
    {
      name: 'falsy values are kept',
      fields: { zero: 0, empty: '', no: false, nil: null, nan: Number.NaN },
      expected: { zero: 0, empty: '', no: false, nil: null, nan: Number.NaN },
    },
    {
      name: 'objects are kept by reference',
      fields: { o: { p: undefined } },
      expected: { o: { p: undefined } },
    },
  ];
  for (const { name, fields, expected } of cases) {
    void it(name, () => {
      const result = definedOnly(fields);
      assert.deepStrictEqual(result, expected);
      for (const key of Object.keys(result)) assert.notEqual(result[key], undefined);
    });
  }

  void it('leaves an undefined key out rather than setting it to undefined', () => {
    const result = definedOnly({ zone: undefined as string | undefined });
    assert.equal('zone' in result, false);
    assert.equal(JSON.stringify({ name: 'd', ...result }), '{"name":"d"}');
  });

  void it('keeps the key order, so a spread in place of the ternaries builds the same object', () => {
    const zone: string | undefined = '2';
    const vmId: string | undefined = undefined;
    const lun: number | undefined = 3;
    const before = {
      name: 'd',
      ...(zone === undefined ? {} : { zone }),
      ...(vmId === undefined ? {} : { vmId }),
      ...(lun === undefined ? {} : { lun }),
    };
    const after = { name: 'd', ...definedOnly({ zone, vmId, lun }) };
    assert.equal(JSON.stringify(after), JSON.stringify(before));
  });

  void it('does not copy the prototype or mutate its argument', () => {
    const fields: object = { a: 1, b: undefined };
    const result: object = definedOnly(fields);
    assert.notEqual(result, fields);
    assert.deepStrictEqual(Object.keys(fields), ['a', 'b']);
  });

  void it('types the result as optional fields without undefined', () => {
    const read = (value: string): { zone: string | undefined; lun: number | undefined } => ({
      zone: value === '' ? undefined : value,
      lun: value === '' ? 1 : undefined,
    });
    const typed: { zone?: string; lun?: number } = definedOnly(read(''));
    assert.deepStrictEqual(typed, { lun: 1 });
  });

  void it('drops void as the ternary narrowed it (a callback that may return nothing)', () => {
    const onCreated = (stop: boolean): (() => void) | void => (stop ? () => undefined : undefined);
    const cancel = onCreated(false);
    const record: { cancel?: () => void } = { ...definedOnly({ cancel }) };
    assert.deepStrictEqual(record, {});
  });
});
