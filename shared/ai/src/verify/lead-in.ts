/**
 * What a sentence claims without its wrapping: a request to notice it ("Please
 * note that ..."), an admonition label ("Note:", "ℹ️ Important:"), a hedge
 * ("It is likely that ...", "We believe that ...", "Arguably, ...") or a
 * lead-in ("In fact, ...", "As mentioned above, ..."). The fact checker judges
 * what remains, so wrapping a claim never takes it out of the check.
 */

const LEAD_INS: RegExp[] = [
  // Admonition labels: "Note:", "ℹ️ Note:", "⚠ Warning:", "Tip -".
  /^[\p{Extended_Pictographic}\p{S}\uFE0F\s]*(?:note|nb|n\.b\.|important|warning|caution|tip|info|hint|remember|reminder|fyi)\s*[:—–-]\s*/iu,
  // Requests to notice: "Please note that", "Keep in mind that", "Be aware that", "Remember:".
  /^(?:please\s+)?(?:do\s+)?(?:note|notice|remember|keep in mind|bear in mind|be aware|be advised|mind|recall|observe)\s*(?:,\s*)?(?:that\s*,?\s+|:\s*)/i,
  /^please\s+(?=\p{Ll})/iu,
  // Hedges and attributions: "It is worth noting that", "It is likely that", "We believe that".
  /^(?:it\s+(?:is|'s|seems|appears|should be noted|must be noted|can be said|turns out)|it’s)\s+(?:(?:also\s+)?(?:worth\s+(?:noting|mentioning|remembering)|important\s+to\s+(?:note|remember|know|understand)|(?:widely\s+|generally\s+|commonly\s+)?(?:believed|thought|said|known|assumed|accepted|understood)|(?:very\s+|quite\s+|highly\s+)?(?:likely|possible|probable|clear|true|evident|obvious|apparent|the case|noteworthy)|(?:that\s+)?))\s*that\s+/i,
  /^(?:we|i|they|experts|many|most people|some)\s+(?:(?:would|do|generally|strongly)\s+)?(?:believe|think|understand|expect|say|note|found|find|feel|suspect|suggest|assume|argue)\s+that\s+/i,
  /^(?:according\s+to\s+(?:the\s+)?(?:docs|documentation|sources?|experts|the\s+manual)|in\s+(?:my|our)\s+(?:view|opinion|experience))\s*,\s*/i,
  // Lead-ins: "In fact,", "Of course,", "As mentioned above,", "Importantly,".
  /^(?:in\s+(?:fact|short|general|practice|particular|other\s+words|summary|essence|addition|brief)|of\s+course|importantly|interestingly|notably|basically|essentially|actually|indeed|arguably|clearly|obviously|evidently|apparently|admittedly|naturally|generally|typically|ultimately|really|simply\s+put|to\s+be\s+(?:clear|sure|fair)|as\s+(?:(?:previously|already)\s+)?(?:mentioned|noted|stated|documented|described|explained|discussed)(?:\s+(?:above|earlier|before|previously))?|as\s+you\s+(?:may|might)?\s*know|by\s+the\s+way|for\s+the\s+record|that\s+said|put\s+simply|also|additionally|furthermore|moreover|however|still|so|then|now)\s*,\s*/i,
  /^(?:perhaps|maybe|possibly|probably|presumably|seemingly|supposedly|reportedly|allegedly)\s*,?\s+/i,
];

/** The claim without its lead-ins (repeatedly: "Please note that, in fact, ..."); the claim itself when it has none. */
export function stripLeadIns(claim: string): string {
  let out = claim.trim();
  for (let changed = true; changed;) {
    changed = false;
    for (const re of LEAD_INS) {
      const m = re.exec(out);
      if (m && m[0].length > 0 && m[0].length < out.length) {
        out = out.slice(m[0].length).trimStart();
        changed = true;
      }
    }
  }
  return out.length > 0 ? out : claim;
}
