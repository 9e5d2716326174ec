/**
 * The hosted pages' one stylesheet, inlined in every page: about 2.5 KB, so it
 * costs no request and no render-blocking fetch. System fonts; a 40rem column
 * (60 to 70 characters of body text, whichever system font draws it); colours
 * that keep WCAG AA contrast in light and dark (prefers-color-scheme); nothing
 * wider than a 320 px screen; print rules that drop the site chrome and spell
 * out where links lead.
 */
export const HOSTED_CSS = `:root{color-scheme:light dark;--fg:#1c1d21;--muted:#4f535b;--bg:#fff;--link:#0b57d0;--rule:#d5d8de;--tint:#f3f4f7}
@media (prefers-color-scheme:dark){:root{--fg:#e7e8ec;--muted:#b0b4bd;--bg:#131418;--link:#8cb6ff;--rule:#3a3e47;--tint:#1d1f25}}
*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:1.0625rem/1.65 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",Helvetica,Arial,sans-serif;overflow-wrap:break-word}
.site,main{max-width:42.5rem;margin:0 auto;padding:0 1.25rem}
.site{display:flex;flex-wrap:wrap;gap:.25rem 1rem;justify-content:space-between;align-items:baseline;padding-block:1rem;font-size:.9375rem;color:var(--muted)}
header.site{border-bottom:1px solid var(--rule)}
footer.site{border-top:1px solid var(--rule);margin-top:3rem}
.site a{color:inherit}
.site .name{font-weight:600;color:var(--fg);text-decoration:none}
h1,h2{line-height:1.25;text-wrap:balance}
h1{font-size:clamp(1.75rem,1.2rem + 2.5vw,2.5rem);margin:2rem 0 .75rem}
h2{font-size:1.375rem;margin:2.25rem 0 .5rem}
p{margin:0 0 1rem}
a{color:var(--link);text-underline-offset:.15em}
a:focus-visible{outline:2px solid var(--link);outline-offset:2px;border-radius:2px}
.description{font-size:1.1875rem;color:var(--muted)}
.dates{font-size:.9375rem;color:var(--muted)}
code{font:.875em/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;background:var(--tint);padding:.1em .3em;border-radius:4px}
sup{line-height:0}
.cite{text-decoration:none;font-size:.8125em;padding:0 .1em}
.sources{margin-top:3rem;border-top:1px solid var(--rule)}
.documents{padding-left:1.25rem}
.source{margin:0 0 1rem}
.source summary{cursor:pointer;color:var(--muted);font-size:.875rem}
.references{padding-left:1.75rem;font-size:.9375rem}
.references li{margin:0 0 1.25rem;scroll-margin-top:1rem}
.references li:target blockquote{border-color:var(--link)}
blockquote{margin:0;padding:.5rem .875rem;border-left:3px solid var(--rule);background:var(--tint)}
cite{display:block;margin-top:.375rem;font-style:normal;color:var(--muted)}
.pages{list-style:none;padding:0}
.pages li{margin:0 0 1.75rem}
.pages a{font-size:1.1875rem;font-weight:600}
.pages p{margin:.25rem 0 0;color:var(--muted)}
@media print{:root{--fg:#000;--muted:#333;--bg:#fff;--link:#000;--rule:#999;--tint:#fff}
body{font-size:11pt}
.site{display:none}
main{max-width:none;padding:0}
h2,h1{break-after:avoid}
blockquote,.references li{break-inside:avoid}
article a[href^="http"]::after{content:" (" attr(href) ")";font-size:.85em;overflow-wrap:anywhere}}
`;
