import { describe, expect, it } from 'vitest';
import { isE164, maskNumber } from '../../src/domain/e164.js';
import { ApiError, ERROR_STATUS, isErrorCode } from '../../src/domain/errors.js';
import { ID_PATTERNS, isAgentId, isTrunkId, newApiKeyId, newNumberId, newTrunkId } from '../../src/domain/ids.js';
import { isSipAddress } from '../../src/domain/sip.js';

describe('E.164', () => {
  it.each(['+919876543210', '+912240001234', '+14155550100', '+44', '+123456789012345'])('accepts %s', (n) => {
    expect(isE164(n)).toBe(true);
  });
  it.each([
    '919876543210',
    '+0919876543210',
    '+1234567890123456',
    '+91 98765 43210',
    '+91-9876543210',
    '+',
    '',
    '+९१९८७६५४३२१०',
    ' +919876543210',
  ])('rejects %j', (n) => {
    expect(isE164(n)).toBe(false);
  });
  it('rejects non-strings', () => {
    expect(isE164(919876543210)).toBe(false);
    expect(isE164(null)).toBe(false);
  });
  it('masks all but the last four digits', () => {
    expect(maskNumber('+919876543210')).toBe('+91******3210');
    expect(maskNumber('+91')).toBe('***');
  });
});

describe('ids', () => {
  it('makes ids of the documented shape, unique across many draws', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const t = newTrunkId();
      expect(t).toMatch(ID_PATTERNS.trunk);
      seen.add(t);
    }
    expect(seen.size).toBe(2000);
    expect(newNumberId()).toMatch(/^num_[a-z2-7]{20}$/);
    expect(newApiKeyId()).toMatch(/^key_[a-z2-7]{12}$/);
  });
  it('tells well-formed from malformed ids', () => {
    expect(isTrunkId('tk_abcdefghijklmnopqrst')).toBe(true);
    expect(isTrunkId('tk_ABCDEFGHIJKLMNOPQRST')).toBe(false);
    expect(isTrunkId('tk_abc')).toBe(false);
    expect(isAgentId('ag_clinic_booking')).toBe(true);
    expect(isAgentId('ag_' + 'a'.repeat(64))).toBe(true);
    expect(isAgentId('ag_' + 'a'.repeat(65))).toBe(false);
    expect(isAgentId('ag_Clinic')).toBe(false);
    expect(isAgentId('clinic')).toBe(false);
  });
});

describe('SIP addresses', () => {
  it.each([
    'sip.example-carrier.in',
    'pbx.tatacommunications.com',
    '203.0.113.10',
    '203.0.113.10:5060',
    '[2001:db8::1]:5061',
    'localhost',
    'sip.example.in:5080',
  ])('accepts %s', (a) => {
    expect(isSipAddress(a)).toBe(true);
  });
  it.each([
    '',
    'sip:acme@sip.example.in',
    'sip.example.in/path',
    'user@sip.example.in',
    'sip example.in',
    '-bad.example.in',
    'sip.example.in:0',
    'sip.example.in:70000',
    'a'.repeat(300),
  ])('rejects %j', (a) => {
    expect(isSipAddress(a)).toBe(false);
  });
});

describe('ApiError', () => {
  it('maps each code to the status table of the API errors', () => {
    expect(ERROR_STATUS).toMatchObject({
      invalid_request: 400,
      unauthorized: 401,
      not_found: 404,
      workflow_not_found: 404,
      session_not_found: 404,
      trunk_not_found: 404,
      session_already_ended: 409,
      idempotency_key_in_progress: 409,
      already_exists: 409,
      idempotency_key_reuse: 422,
      caller_id_not_on_trunk: 422,
      rate_limit_exceeded: 429,
      dial_failed: 502,
      telephony_not_configured: 503,
    });
  });
  it('builds the error body with an optional param and status override', () => {
    const e = new ApiError('invalid_request', 'too big', { status: 413 });
    expect(e.status).toBe(413);
    expect(e.toBody()).toEqual({ error: { code: 'invalid_request', message: 'too big' } });
    expect(new ApiError('trunk_not_found', 'x', { param: 'trunk_id' }).toBody().error.param).toBe('trunk_id');
    expect(isErrorCode('dial_failed')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
  });
});
