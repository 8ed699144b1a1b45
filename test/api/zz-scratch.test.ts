import { test } from 'vitest';
import { makeTestApp } from '../support/app.js';

test('scratch', async () => {
  const t = await makeTestApp();
  const r = await t.call('GET', '/v1/openapi.json', undefined, { key: null });
  const doc = r.json();
  console.log(Object.keys(doc.paths), JSON.stringify(doc.paths['/v1/trunks'].post).slice(0, 1500));
  await t.close();
});
