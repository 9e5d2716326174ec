/**
 * The claim turned around: its first direction word swapped for the opposite
 * ("increases" → "decreases"), else its negation dropped, else a negation
 * added. A sentence embedding barely moves when a claim is negated, but a
 * source span that says the opposite of the claim still sits a little closer to
 * the turned-around claim than to the claim itself: the fact checker measures
 * that difference as one sign of a contradiction worded differently.
 */

const PAIRS: [string, string][] = [
  ['increase', 'decrease'],
  ['increases', 'decreases'],
  ['increased', 'decreased'],
  ['increasing', 'decreasing'],
  ['higher', 'lower'],
  ['more', 'less'],
  ['greater', 'smaller'],
  ['larger', 'smaller'],
  ['elevated', 'reduced'],
  ['enhanced', 'reduced'],
  ['enhances', 'reduces'],
  ['enhance', 'reduce'],
  ['improves', 'worsens'],
  ['improved', 'worsened'],
  ['improve', 'worsen'],
  ['positive', 'negative'],
  ['positively', 'negatively'],
  ['upregulated', 'downregulated'],
  ['upregulates', 'downregulates'],
  ['promotes', 'inhibits'],
  ['promote', 'inhibit'],
  ['promoted', 'inhibited'],
  ['activates', 'inhibits'],
  ['activate', 'inhibit'],
  ['activation', 'inhibition'],
  ['induces', 'suppresses'],
  ['induced', 'suppressed'],
  ['induce', 'suppress'],
  ['above', 'below'],
  ['longer', 'shorter'],
  ['rise', 'fall'],
  ['gain', 'loss'],
  ['stronger', 'weaker'],
  ['faster', 'slower'],
  ['earlier', 'later'],
  ['highest', 'lowest'],
  ['better', 'worse'],
  ['benefit', 'harm'],
  ['raises', 'lowers'],
  ['raise', 'lower'],
  ['reduces', 'increases'],
  ['reduce', 'increase'],
  ['reduced', 'increased'],
  ['decline', 'rise'],
  ['risk', 'protection'],
  ['associated', 'unassociated'],
  ['effective', 'ineffective'],
  ['sufficient', 'insufficient'],
  ['necessary', 'unnecessary'],
  ['required', 'dispensable'],
  ['can', 'cannot'],
];

const OPPOSITE = new Map<string, string>();
for (const [a, b] of PAIRS) {
  if (!OPPOSITE.has(a)) OPPOSITE.set(a, b);
  if (!OPPOSITE.has(b)) OPPOSITE.set(b, a);
}

const keepCase = (from: string, to: string) => (/^\p{Lu}/u.test(from) ? to.charAt(0).toUpperCase() + to.slice(1) : to);

/** The claim saying the opposite (see above); never the claim itself. */
export function contrastOf(claim: string): string {
  let changed = false;
  const flipped = claim.replace(/[\p{L}-]+/gu, (w) => {
    const o = changed ? undefined : OPPOSITE.get(w.toLowerCase());
    if (!o) return w;
    changed = true;
    return keepCase(w, o);
  });
  if (changed) return flipped;
  const negation = /\b(?:not|no)\s+/i.exec(claim);
  if (negation) return claim.slice(0, negation.index) + claim.slice(negation.index + negation[0].length);
  const aux = /\b(?:is|are|was|were|can|could|may|might|will|would|should|has|have|had|does|do|did)\b/i.exec(claim);
  if (aux) return `${claim.slice(0, aux.index + aux[0].length)} not${claim.slice(aux.index + aux[0].length)}`;
  return `It is not true that ${claim.charAt(0).toLowerCase()}${claim.slice(1)}`;
}
