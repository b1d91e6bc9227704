/** The status page's stylesheet (inline: the page's CSP allows no other). */
export const PAGE_STYLE = `
:root{color-scheme:light;--fg:#1a1a1a;--muted:#555;--bg:#fff;--panel:#f6f7f9;--line:#d0d4da;--accent:#0b5cad}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","DejaVu Sans",sans-serif;color:var(--fg);background:var(--bg)}
header,main{max-width:72rem;margin:0 auto;padding:0 1rem}
header{padding-top:1rem;border-bottom:1px solid var(--line)}
h1{font-size:1.5rem;margin:.5rem 0}
h2{font-size:1.3rem;margin:1.5rem 0 .5rem}
h3{font-size:1.15rem;margin:0 0 .5rem}
h4{font-size:1rem;margin:1.25rem 0 .4rem;color:#333}
.pool{background:var(--panel);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:0 0 1.25rem}
.muted{color:var(--muted)}
.small{font-size:.85rem;font-weight:normal}
.big{font-size:1.25rem}
.id,code{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.85em;overflow-wrap:anywhere}
.empty{color:var(--muted);font-style:italic;margin:.25rem 0}
.facts{display:grid;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr));gap:.5rem 1rem;margin:0}
.facts div{min-width:0}
.facts .wide{grid-column:span 2}
.overview{margin:0 0 1.25rem}
.overview a{color:var(--accent)}
.glance tbody tr.attention th{border-left:4px solid #c0392b}
.glance td ul{margin:0;padding-left:1rem}
.not-refreshed{margin:1.5rem 0}
.not-refreshed summary{cursor:pointer;font-weight:600}
.not-refreshed ul{padding-left:1.1rem}
.facts dt{font-size:.8rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.facts dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .45em;border-radius:.6em;font-size:.8rem;font-weight:600;border:1px solid;white-space:nowrap}
.good{background:#e3f4e8;color:#14532d;border-color:#86c59b}
.warn{background:#fff4d6;color:#6b4400;border-color:#e0b54c}
.bad{background:#fde7e7;color:#8a1414;border-color:#e39a9a}
.info{background:#e4eefb;color:#0b3d7a;border-color:#8fb3e3}
.neutral{background:#eceef1;color:#333;border-color:#b9bec6}
table{width:100%;border-collapse:collapse;background:var(--bg);font-size:.92rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line);overflow-wrap:break-word}
thead th{background:#e9ecf0;font-size:.8rem;text-transform:uppercase;letter-spacing:.03em}
tbody th{font-weight:600}
.chart{margin:0;max-width:26rem}
.chart svg{width:100%;height:6rem;display:block;background:var(--bg);border:1px solid var(--line);border-radius:4px}
.chart .line{fill:none;stroke:var(--accent);stroke-width:2;vector-effect:non-scaling-stroke}
.chart circle{fill:var(--accent)}
.chart .axis{stroke:var(--line)}
.chart .tick{font-size:9px;fill:var(--muted)}
.chart .end{text-anchor:end}
figcaption{font-size:.8rem;color:var(--muted)}
.timeline{list-style:none;margin:0;padding:0;min-width:10rem}
.step{margin:0 0 .3rem}
.bar{display:block;height:.55rem;border-radius:3px;background:#5b8fd1}
.step.capture .bar{background:#c77c02}
.step.build-and-canary .bar,.step.build-and-publish .bar{background:#8e5cc2}
.step.running .bar{background:#0b5cad}
.step.open .bar{background:repeating-linear-gradient(90deg,#5b8fd1 0 6px,transparent 6px 10px)}
.step-text{font-size:.82rem}
footer{max-width:72rem;margin:0 auto;padding:1rem;color:var(--muted);font-size:.85rem}
@media (max-width:40rem){
 header,main{padding:0 .6rem}
 .facts .wide{grid-column:auto}
 caption{display:block}
 .pool{padding:.6rem}
 table,thead,tbody,tr,th,td{display:block;width:100%}
 thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
 tr{border:1px solid var(--line);border-radius:6px;margin:0 0 .5rem;padding:.25rem .5rem;background:var(--bg)}
 th,td{border:0;padding:.15rem 0}
 tbody th::before,td::before{content:attr(data-label);display:block;font-size:.72rem;text-transform:uppercase;letter-spacing:.04em;color:var(--muted);font-weight:600}
}
`;
