import { afterAll, beforeAll, describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { startTestSystem, type TestSystem } from './harness.js';
import { newApiKey, newOrgAdmin } from './identity-fixtures.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

let t: TestSystem;
beforeAll(async () => {
  t = await startTestSystem();
});
afterAll(async () => t.stop());

const create = async (name: string, description?: string) => {
  const res = await t.api('POST', '/categories', { body: { name, ...(description !== undefined && { description }) } });
  assert.equal(res.status, 201, res.text);
  return res.body as { category_id: string; name: string; description?: string; deleted_at: string | null };
};

describe('POST /categories', () => {
  it('creates a category: 201 with the spec fields', async () => {
    const res = await t.api('POST', '/categories', { body: { name: 'Product docs', description: 'All product documentation' } });
    assert.equal(res.status, 201);
    assert.match(res.body.category_id, UUID_RE);
    assert.equal(res.body.name, 'Product docs');
    assert.equal(res.body.description, 'All product documentation');
    assert.equal(res.body.deleted_at, null);
    assert.ok(!Number.isNaN(Date.parse(res.body.created_at)));
    assert.equal(res.body.created_at, res.body.updated_at);
    assert.equal(res.body.org_id, undefined, 'the organization is implied by the credential');
  });

  it('rejects a duplicate name in the organization, ignoring case and surrounding spaces: 409', async () => {
    await create('Pricing');
    const res = await t.api('POST', '/categories', { body: { name: '  pricing ' } });
    assert.equal(res.status, 409);
    assert.equal(typeof res.body.error.code, 'string');
    assert.equal(typeof res.body.error.message, 'string');
  });

  for (const [label, body, field] of [
    ['a name of one character', { name: 'a' }, 'name'],
    ['a name of 256 characters', { name: 'x'.repeat(256) }, 'name'],
    ['a missing name', { description: 'd' }, 'name'],
    ['a description over 1000 characters', { name: 'Long description', description: 'd'.repeat(1001) }, 'description'],
    ['an unknown field', { name: 'Unknown field', colour: 'red' }, 'colour'],
    ['a name that is not a string', { name: 42 }, 'name'],
  ] as const) {
    it(`rejects ${label}: 400 naming the field`, async () => {
      const res = await t.api('POST', '/categories', { body });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.error.details.field, field);
    });
  }

  it('accepts names of exactly 2 and 255 characters and a description of 1000', async () => {
    await create('ab');
    await create('y'.repeat(255), 'd'.repeat(1000));
  });

  it('rejects a name that is too short once trimmed: 400', async () => {
    const res = await t.api('POST', '/categories', { body: { name: '  a  ' } });
    assert.equal(res.status, 400);
  });

  it('rejects a missing or malformed body: 400', async () => {
    assert.equal((await t.api('POST', '/categories')).status, 400);
    assert.equal(
      (await t.api('POST', '/categories', { rawBody: '{"name":', headers: { 'content-type': 'application/json' } })).status,
      400,
    );
    assert.equal((await t.api('POST', '/categories', { body: ['not', 'an', 'object'] })).status, 400);
  });
});

describe('GET /categories', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startTestSystem();
    for (let i = 0; i < 12; i++) {
      const res = await sys.api('POST', '/categories', { body: { name: `Category ${String(i).padStart(2, '0')}` } });
      assert.equal(res.status, 201);
    }
  });
  afterAll(async () => sys.stop());

  it('lists 10 by default, oldest first, with the total in X-Total-Count', async () => {
    const res = await sys.api('GET', '/categories');
    assert.equal(res.status, 200);
    assert.equal(res.body.length, 10);
    assert.equal(res.body[0].name, 'Category 00');
    assert.equal(res.headers.get('x-total-count'), '12');
  });

  it('pages with limit and offset', async () => {
    const res = await sys.api('GET', '/categories?limit=5&offset=10');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((c: { name: string }) => c.name),
      ['Category 10', 'Category 11'],
    );
    assert.equal((await sys.api('GET', '/categories?limit=100')).body.length, 12);
    assert.equal((await sys.api('GET', '/categories?offset=50')).body.length, 0);
  });

  for (const query of ['limit=0', 'limit=101', 'limit=-1', 'limit=abc', 'offset=-1', 'offset=x', 'limit=1.5', 'sort=name']) {
    it(`rejects ${query}: 400`, async () => {
      const res = await sys.api('GET', `/categories?${query}`);
      assert.equal(res.status, 400, res.text);
    });
  }
});

describe('GET /categories/all', () => {
  it('returns every live category with its live topics', async () => {
    const sys = await startTestSystem();
    try {
      const batch = await sys.api('POST', '/categories/batch-create', {
        body: {
          categories: [
            { name: 'Guides', topics: [{ name: 'Setup' }, { name: 'Upgrade', description: 'How to upgrade' }] },
            { name: 'Empty one' },
            { name: 'Going away', topics: [{ name: 'Gone' }] },
          ],
        },
      });
      assert.equal(batch.status, 201);
      const [guides, , goingAway] = batch.body;
      assert.equal((await sys.api('DELETE', `/categories/${goingAway.category_id}`)).status, 204);
      assert.equal((await sys.api('DELETE', `/categories/${guides.category_id}/topics/${guides.topics[0].topic_id}`)).status, 204);

      const res = await sys.api('GET', '/categories/all');
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.map((c: { name: string; topics: { name: string }[] }) => [c.name, c.topics.map((x) => x.name)]),
        [
          ['Guides', ['Upgrade']],
          ['Empty one', []],
        ],
      );
      assert.equal(res.body[0].topics[0].description, 'How to upgrade');
      assert.equal(res.body[0].topics[0].deleted_at, null);
    } finally {
      await sys.stop();
    }
  });
});

describe('GET/PUT/PATCH/DELETE /categories/{category_id}', () => {
  it('gets a category: 200; unknown id: JSON 404; malformed id: 400', async () => {
    const c = await create('Get me', 'desc');
    const res = await t.api('GET', `/categories/${c.category_id}`);
    assert.equal(res.status, 200);
    assert.deepEqual({ name: res.body.name, description: res.body.description }, { name: 'Get me', description: 'desc' });
    const missing = await t.api('GET', `/categories/${MISSING}`);
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(typeof missing.body.error.code, 'string');
    assert.equal((await t.api('GET', '/categories/not-a-uuid')).status, 400);
  });

  it('PUT replaces name and description (a left-out description is cleared): 200', async () => {
    const c = await create('Put me', 'old');
    const res = await t.api('PUT', `/categories/${c.category_id}`, { body: { name: 'Put me renamed' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'Put me renamed');
    assert.equal(res.body.description, undefined);
    assert.ok(res.body.updated_at >= res.body.created_at);
    assert.equal((await t.api('GET', `/categories/${c.category_id}`)).body.name, 'Put me renamed');
  });

  it('PUT errors: 400 without a name, 404 unknown, 409 to a taken name', async () => {
    const a = await create('Put taken A');
    await create('Put taken B');
    assert.equal((await t.api('PUT', `/categories/${a.category_id}`, { body: { description: 'x' } })).status, 400);
    assert.equal((await t.api('PUT', `/categories/${MISSING}`, { body: { name: 'Whatever' } })).status, 404);
    assert.equal((await t.api('PUT', `/categories/${a.category_id}`, { body: { name: 'put taken b' } })).status, 409);
    const sameName = await t.api('PUT', `/categories/${a.category_id}`, { body: { name: 'PUT TAKEN A' } });
    assert.equal(sameName.status, 200, 'renaming to its own name in another case is allowed');
  });

  it('PATCH changes only the fields sent; description null clears it: 200', async () => {
    const c = await create('Patch me', 'keep me');
    const renamed = await t.api('PATCH', `/categories/${c.category_id}`, { body: { name: 'Patched' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Patched');
    assert.equal(renamed.body.description, 'keep me');
    const redescribed = await t.api('PATCH', `/categories/${c.category_id}`, { body: { description: 'new' } });
    assert.equal(redescribed.body.name, 'Patched');
    assert.equal(redescribed.body.description, 'new');
    const cleared = await t.api('PATCH', `/categories/${c.category_id}`, { body: { description: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.description, undefined);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}`, { body: {} })).status, 200);
  });

  it('PATCH errors: 400 bad values, 404 unknown, 409 taken name', async () => {
    const c = await create('Patch errors');
    await create('Patch taken');
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}`, { body: { name: 'x' } })).status, 400);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}`, { body: { description: 'd'.repeat(1001) } })).status, 400);
    assert.equal((await t.api('PATCH', `/categories/${MISSING}`, { body: { name: 'Nobody' } })).status, 404);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}`, { body: { name: 'Patch Taken' } })).status, 409);
  });

  it('DELETE sets deleted_at: 204; the category leaves lists, its id is 404 and its name is free again', async () => {
    const c = await create('Delete me');
    const res = await t.api('DELETE', `/categories/${c.category_id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');
    assert.equal((await t.api('GET', `/categories/${c.category_id}`)).status, 404);
    assert.equal((await t.api('DELETE', `/categories/${c.category_id}`)).status, 404);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}`, { body: { name: 'Revived' } })).status, 404);
    const list = await t.api('GET', '/categories?limit=100');
    assert.ok(!list.body.some((x: { category_id: string }) => x.category_id === c.category_id));
    const again = await create('Delete me');
    assert.notEqual(again.category_id, c.category_id);
  });

  it('DELETE of an unknown id: 404', async () => {
    assert.equal((await t.api('DELETE', `/categories/${MISSING}`)).status, 404);
  });
});

describe('POST /categories/batch-create', () => {
  it('creates categories with nested topics: 201', async () => {
    const res = await t.api('POST', '/categories/batch-create', {
      body: {
        categories: [{ name: 'Batch one', description: 'first', topics: [{ name: 'B1 topic', description: 'td' }] }, { name: 'Batch two' }],
      },
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.length, 2);
    assert.equal(res.body[0].description, 'first');
    assert.equal(res.body[0].topics[0].name, 'B1 topic');
    assert.equal(res.body[0].topics[0].category_id, res.body[0].category_id);
    assert.deepEqual(res.body[1].topics, []);
  });

  it('is all or nothing: a clash with an existing name is 409 and creates nothing', async () => {
    await create('Batch existing');
    const res = await t.api('POST', '/categories/batch-create', {
      body: { categories: [{ name: 'Batch fresh' }, { name: 'batch existing' }] },
    });
    assert.equal(res.status, 409);
    const all = await t.api('GET', '/categories/all');
    assert.ok(!all.body.some((c: { name: string }) => c.name === 'Batch fresh'));
  });

  it('is all or nothing: duplicates inside the batch, or topic clashes inside one category, are 409', async () => {
    assert.equal(
      (await t.api('POST', '/categories/batch-create', { body: { categories: [{ name: 'Twin' }, { name: 'twin' }] } })).status,
      409,
    );
    const clash = await t.api('POST', '/categories/batch-create', {
      body: { categories: [{ name: 'Topic clash', topics: [{ name: 'Same' }, { name: 'SAME' }] }] },
    });
    assert.equal(clash.status, 409);
    const all = await t.api('GET', '/categories/all');
    assert.ok(!all.body.some((c: { name: string }) => ['Twin', 'Topic clash'].includes(c.name)));
  });

  it('rejects bad batches: 400', async () => {
    assert.equal((await t.api('POST', '/categories/batch-create', { body: {} })).status, 400);
    assert.equal((await t.api('POST', '/categories/batch-create', { body: { categories: [] } })).status, 400);
    assert.equal((await t.api('POST', '/categories/batch-create', { body: { categories: [{ name: 'x' }] } })).status, 400);
    const badTopic = await t.api('POST', '/categories/batch-create', { body: { categories: [{ name: 'Okay', topics: [{ name: 'y' }] }] } });
    assert.equal(badTopic.status, 400);
    assert.equal(badTopic.body.error.details.field, 'categories/0/topics/0/name');
  });
});

describe('topics', () => {
  it('POST /categories/{id}/topics creates a topic: 201', async () => {
    const c = await create('Topic home');
    const res = await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'Install', description: 'Installing' } });
    assert.equal(res.status, 201);
    assert.match(res.body.topic_id, UUID_RE);
    assert.equal(res.body.category_id, c.category_id);
    assert.equal(res.body.name, 'Install');
    assert.equal(res.body.description, 'Installing');
    assert.equal(res.body.deleted_at, null);
  });

  it('topic names are unique per category (409), not across categories', async () => {
    const a = await create('Topic scope A');
    const b = await create('Topic scope B');
    assert.equal((await t.api('POST', `/categories/${a.category_id}/topics`, { body: { name: 'Shared' } })).status, 201);
    assert.equal((await t.api('POST', `/categories/${a.category_id}/topics`, { body: { name: 'shared' } })).status, 409);
    assert.equal((await t.api('POST', `/categories/${b.category_id}/topics`, { body: { name: 'Shared' } })).status, 201);
  });

  it('POST topic errors: 400 bad name, 404 unknown or deleted category', async () => {
    const c = await create('Topic errors');
    assert.equal((await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'x' } })).status, 400);
    assert.equal((await t.api('POST', `/categories/${c.category_id}/topics`, { body: {} })).status, 400);
    assert.equal((await t.api('POST', `/categories/${MISSING}/topics`, { body: { name: 'Orphan' } })).status, 404);
    await t.api('DELETE', `/categories/${c.category_id}`);
    assert.equal((await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'Late' } })).status, 404);
  });

  it('POST .../topics/batch-create: 201, all or nothing (409), 400, 404', async () => {
    const c = await create('Topic batch');
    const ok = await t.api('POST', `/categories/${c.category_id}/topics/batch-create`, {
      body: { topics: [{ name: 'One' }, { name: 'Two', description: 'second' }] },
    });
    assert.equal(ok.status, 201);
    assert.deepEqual(
      ok.body.map((x: { name: string }) => x.name),
      ['One', 'Two'],
    );
    const clash = await t.api('POST', `/categories/${c.category_id}/topics/batch-create`, {
      body: { topics: [{ name: 'Three' }, { name: 'one' }] },
    });
    assert.equal(clash.status, 409);
    const all = await t.api('GET', '/categories/all');
    const home = all.body.find((x: { category_id: string }) => x.category_id === c.category_id);
    assert.deepEqual(
      home.topics.map((x: { name: string }) => x.name),
      ['One', 'Two'],
    );
    assert.equal((await t.api('POST', `/categories/${c.category_id}/topics/batch-create`, { body: { topics: [] } })).status, 400);
    assert.equal((await t.api('POST', `/categories/${MISSING}/topics/batch-create`, { body: { topics: [{ name: 'Nope' }] } })).status, 404);
  });

  it('PATCH .../topics/{topic_id}: 200 only the fields sent; 400; 404; 409', async () => {
    const c = await create('Topic patch');
    const other = await create('Topic patch other');
    const t1 = (await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'First', description: 'keep' } })).body;
    await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'Second' } });
    const renamed = await t.api('PATCH', `/categories/${c.category_id}/topics/${t1.topic_id}`, { body: { name: 'Renamed' } });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Renamed');
    assert.equal(renamed.body.description, 'keep');
    const cleared = await t.api('PATCH', `/categories/${c.category_id}/topics/${t1.topic_id}`, { body: { description: null } });
    assert.equal(cleared.body.description, undefined);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}/topics/${t1.topic_id}`, { body: { name: 'second' } })).status, 409);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}/topics/${t1.topic_id}`, { body: { name: 'z' } })).status, 400);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}/topics/${MISSING}`, { body: { name: 'Nope' } })).status, 404);
    assert.equal((await t.api('PATCH', `/categories/${other.category_id}/topics/${t1.topic_id}`, { body: { name: 'Moved' } })).status, 404);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}/topics/nope`, { body: { name: 'Nope' } })).status, 400);
  });

  it('DELETE .../topics/{topic_id}: 204, then 404; the name is free again', async () => {
    const c = await create('Topic delete');
    const topic = (await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'Doomed' } })).body;
    assert.equal((await t.api('DELETE', `/categories/${c.category_id}/topics/${topic.topic_id}`)).status, 204);
    assert.equal((await t.api('DELETE', `/categories/${c.category_id}/topics/${topic.topic_id}`)).status, 404);
    assert.equal((await t.api('PATCH', `/categories/${c.category_id}/topics/${topic.topic_id}`, { body: { name: 'Back' } })).status, 404);
    assert.equal((await t.api('POST', `/categories/${c.category_id}/topics`, { body: { name: 'Doomed' } })).status, 201);
  });
});

describe('another organization', () => {
  it('gets 404 for every id of this one, sees none of its categories, and may reuse its names', async () => {
    const mine = await create('Cross org category', 'mine');
    const topic = (await t.api('POST', `/categories/${mine.category_id}/topics`, { body: { name: 'Cross org topic' } })).body;
    const { key } = await newApiKey(await newOrgAdmin(t, 'cross'), { name: 'other org key' });
    const c = `/categories/${mine.category_id}`;
    const tp = `${c}/topics/${topic.topic_id}`;
    const attempts: [string, string, unknown?][] = [
      ['GET', c],
      ['PUT', c, { name: 'Stolen' }],
      ['PATCH', c, { name: 'Stolen' }],
      ['DELETE', c],
      ['POST', `${c}/topics`, { name: 'Sneaky' }],
      ['POST', `${c}/topics/batch-create`, { topics: [{ name: 'Sneaky' }] }],
      ['PATCH', tp, { name: 'Sneaky' }],
      ['DELETE', tp],
    ];
    for (const [method, path, body] of attempts) {
      const res = await t.api(method, path, { key, body });
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(typeof res.body.error.code, 'string');
    }
    assert.deepEqual((await t.api('GET', '/categories/all', { key })).body, []);
    assert.equal((await t.api('GET', '/categories', { key })).headers.get('x-total-count'), '0');
    assert.equal((await t.api('POST', '/categories', { key, body: { name: 'Cross org category' } })).status, 201);
    const still = await t.api('GET', c);
    assert.equal(still.status, 200);
    assert.equal(still.body.name, 'Cross org category');
    assert.equal(still.body.description, 'mine');
  });
});

describe('concurrent requests (one SQLite writer per service, transactions serialised)', () => {
  it('gives each name exactly one 201 and the rest 409, never a 500, and loses no write', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `Concurrent ${i}`);
    // Every name three times, interleaved, with case and spacing variants that count as the same name.
    const sent = names.flatMap((n) => [n, n.toUpperCase(), `  ${n.toLowerCase()} `]);
    const results = await Promise.all(sent.map((name) => t.api('POST', '/categories', { body: { name } })));
    const statuses = results.map((r) => r.status);
    assert.deepEqual([...new Set(statuses)].sort(), [201, 409], statuses.join(','));
    assert.equal(statuses.filter((s) => s === 201).length, names.length);
    const created = results.filter((r) => r.status === 201).map((r) => r.body as { category_id: string; name: string });

    // Concurrent writes to different streams and to the same stream.
    const renames = await Promise.all(
      created.map((c, i) => t.api('PATCH', `/categories/${c.category_id}`, { body: { description: `described ${i}` } })),
    );
    assert.ok(renames.every((r) => r.status === 200));
    const first = created[0]!;
    const topics = await Promise.all(
      Array.from({ length: 20 }, (_, i) => t.api('POST', `/categories/${first.category_id}/topics`, { body: { name: `Topic ${i % 10}` } })),
    );
    assert.equal(topics.filter((r) => r.status === 201).length, 10);
    assert.equal(topics.filter((r) => r.status === 409).length, 10);

    const all = (await t.api('GET', '/categories/all')).body as { category_id: string; description?: string; topics: unknown[] }[];
    for (const [i, c] of created.entries()) {
      const found = all.find((a) => a.category_id === c.category_id);
      assert.ok(found, c.name);
      assert.equal(found.description, `described ${i}`);
    }
    assert.equal(all.find((a) => a.category_id === first.category_id)!.topics.length, 10);
  });
});
