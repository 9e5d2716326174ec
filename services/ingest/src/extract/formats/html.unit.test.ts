import { describe, it } from 'vitest';
import assert from 'node:assert/strict';
import { extractHtml } from './html.js';

describe('HTML', () => {
  it('keeps <pre> as a code block with its lines, inline <code> in backticks (bare in headings), and no tags, anchors or scripts', () => {
    const page = `<!doctype html><html><head><title>Hooks</title><style>h1 { color: red }</style></head><body>
<nav>Docs | Blog</nav><main>
<h2 id="hooks">The <code>onRequest</code> hook<a class="headerlink" href="#hooks">¶</a></h2>
<h3><a href="#x" aria-hidden="true">#</a>Details</h3>
<h3><a href="#y">#</a> More</h3>
<p><a id="lifecycle"></a>Call <a href="./Server.md#close"><code>fastify.close()</code></a> to stop; see <a href="https://github.com/fastify/fastify/blob/main/test/hooks-async.js">test/hooks-async.js</a>.<script>alert(1)</script></p>
<pre><code class="language-js">fastify.addHook('preHandler', (request, reply, done) =&gt; {
  // some code
  done()
})
</code></pre>
<table><tr><th>Hook</th><th>When</th></tr><tr><td><code>onSend</code></td><td>before<br>sending</td></tr></table>
<p>Empty <code> </code>code.</p>
</main><footer>Copyright</footer></body></html>`;
    assert.deepEqual(extractHtml(page), [
      { kind: 'heading', level: 2, text: 'The onRequest hook' },
      { kind: 'heading', level: 3, text: 'Details' },
      { kind: 'heading', level: 3, text: 'More' },
      { kind: 'paragraph', text: 'Call `fastify.close()` to stop; see test/hooks-async.js.' },
      { kind: 'code', text: "fastify.addHook('preHandler', (request, reply, done) => {\n  // some code\n  done()\n})" },
      { kind: 'row', text: 'Hook | When' },
      { kind: 'row', text: '`onSend` | before sending' },
      { kind: 'paragraph', text: 'Empty code.' },
    ]);
  });
});
