/** The one stylesheet of every page (served at /pages/style.css; no framework, no web fonts). */
export const STYLESHEET = `
:root{color-scheme:light;--ink:#1d2330;--muted:#5a6272;--line:#d9dde5;--accent:#1f5fbf;--ok:#17703a;--warn:#9a3b00;--bg:#f6f7f9}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:46rem;margin:0 auto;padding:1.25rem 1rem 3rem}
h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.2rem;margin:2rem 0 .75rem}
h3{font-size:1.05rem;margin:1.25rem 0 .5rem}
p,ul,ol{margin:.5rem 0}
a{color:var(--accent)}
.card{background:#fff;border:1px solid var(--line);border-radius:.5rem;padding:1rem;margin:1rem 0}.card h2,.card h3{margin-top:0}
.muted{color:var(--muted)}
.status{display:inline-block;border-radius:1rem;padding:.1rem .6rem;font-size:.85rem;background:#e8ecf3}
.status.ok{background:#dcf2e3;color:var(--ok)}
.status.warn{background:#fde9dc;color:var(--warn)}
table{width:100%;border-collapse:collapse;margin:.5rem 0;font-size:.95rem}
th,td{text-align:left;padding:.45rem .35rem;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right;white-space:nowrap}
tfoot td,tfoot th{font-weight:600}tfoot th{text-align:right}
caption{text-align:left;font-weight:600;padding:.25rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}
dt{color:var(--muted)}dd{margin:0}
form{margin:1rem 0}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
label.check{display:flex;gap:.5rem;align-items:flex-start;font-weight:400}
input[type=text],input[type=email],select{width:100%;padding:.55rem .6rem;font:inherit;border:1px solid #9aa3b2;border-radius:.35rem;background:#fff}
input:focus,select:focus,button:focus,a:focus{outline:3px solid #8db4f0;outline-offset:1px}
button{margin-top:1rem;padding:.65rem 1.2rem;font:inherit;font-weight:600;color:#fff;background:var(--accent);border:0;border-radius:.35rem;cursor:pointer}
button.secondary{background:#fff;color:var(--accent);border:1px solid var(--accent)}
.errors{border:1px solid var(--warn);background:#fff6f0;border-radius:.35rem;padding:.5rem 1rem;color:var(--warn)}
.field-error{color:var(--warn);font-weight:600;margin:.25rem 0 0;font-size:.95rem}
[aria-invalid=true]{border-color:var(--warn)}
ul.plain{list-style:none;padding:0}ul.plain li{margin:.35rem 0}
.section-content img{max-width:100%}
.parties{display:grid;grid-template-columns:1fr 1fr;gap:1rem}.parties .card{margin:0}
@media (max-width:30rem){main{padding:1rem .75rem 2rem}table{font-size:.9rem}dl,.parties{grid-template-columns:1fr}th.num{white-space:normal}th,td{padding:.4rem .25rem}}
.notice{border-color:var(--ok);color:var(--ok)}
`.trim();
