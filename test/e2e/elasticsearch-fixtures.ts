/**
 * Content items (distinct content_id, counted exactly by a composite aggregation, page by
 * page) and chunks in an Elasticsearch index; zeros before the index exists.
 */
export async function indexedInElasticsearch(url: string, index: string): Promise<{ contents: number; chunks: number }> {
  let contents = 0;
  let chunks = 0;
  let after: Record<string, string> | undefined;
  for (;;) {
    const res = await fetch(`${url}/${index}/_search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        size: 0,
        track_total_hits: true,
        aggs: { ids: { composite: { size: 10000, sources: [{ id: { terms: { field: 'content_id' } } }], ...(after && { after }) } } },
      }),
    });
    if (res.status === 404) return { contents: 0, chunks: 0 };
    if (!res.ok) throw new Error(`counting ${index}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as {
      hits: { total: { value: number } };
      aggregations: { ids: { buckets: unknown[]; after_key?: Record<string, string> } };
    };
    chunks = body.hits.total.value;
    contents += body.aggregations.ids.buckets.length;
    after = body.aggregations.ids.after_key;
    if (body.aggregations.ids.buckets.length === 0 || !after) return { contents, chunks };
  }
}
