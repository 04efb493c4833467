// Where a module's bytes are: attributes the code of each web module and component to
// crates and to the core's modules, by the function names the linker writes into the
// `name` section. scripts/build.sh keeps a copy of each module as cargo linked it (before
// wasm-bindgen and wasm-opt strip the names) in target/names/; run this after a build.
//
//   node scripts/size-breakdown.mjs                  every module, crates and core modules
//   node scripts/size-breakdown.mjs promptloom_lower one module
//   DEPTH=3 TOP=60 node scripts/size-breakdown.mjs promptloom_lower
//
// The figures are the code bytes of the functions as linked (wasm-opt -Oz then takes about
// 7-10 % off) and, for each group, the gzip of its functions' code alone (what the group
// would cost if nothing else compressed alongside it: a rough share, not additive). A
// generic function is counted where it is defined (`alloc::vec` holds the core's
// `collect`s), and a trait method at the type it is implemented for.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const DIR = 'target/names';
const depth = Number(process.env.DEPTH ?? 2);
const top = Number(process.env.TOP ?? 30);

/** Demangles a Rust symbol (legacy `_ZN…E` or v0 `_R…`) into its path, hash dropped. */
export function demangle(s) {
  if (s.startsWith('_ZN')) {
    let p = 3;
    const parts = [];
    while (p < s.length && s[p] !== 'E') {
      const m = /^\d+/.exec(s.slice(p));
      if (!m) break;
      const l = Number(m[0]);
      p += m[0].length;
      parts.push(s.slice(p, p + l));
      p += l;
    }
    if (parts.length && /^h[0-9a-f]{16}$/.test(parts.at(-1))) parts.pop();
    const codes = { LT: '<', GT: '>', u20: ' ', RF: '&', C: ',', BP: '*', u7b: '{', u7d: '}', u27: "'", u5b: '[', u5d: ']', u3b: ';', SP: '@' };
    return parts
      .map((x) => x.replace(/^_\$/, '$').replace(/\$(\w+?)\$/g, (all, c) => codes[c] ?? all).replace(/\.\./g, '::'))
      .join('::');
  }
  if (s.startsWith('_R')) {
    // v0: skip the namespace tags, then the crate root and the identifiers after it.
    let p = 2;
    while (s[p] === 'N') p += 2;
    const out = [];
    if (s[p] === 'C') {
      p++;
      if (s[p] === 's') p = s.indexOf('_', p) + 1;
    }
    for (;;) {
      if (s[p] === 's') p = s.indexOf('_', p) + 1;
      const m = /^\d+/.exec(s.slice(p));
      if (!m || p <= 0) break;
      let at = p + m[0].length;
      if (s[at] === '_') at++;
      out.push(s.slice(at, at + Number(m[0])));
      p = at + Number(m[0]);
    }
    return out.join('::') || s;
  }
  return s;
}

/** The group a function's path falls in: the self type's path for `<T as Trait>::f`. */
function group(path) {
  if (path.startsWith('_R')) {
    const crate = /\d(core|alloc|std)\d/.exec(path);
    return crate ? crate[1] : 'other';
  }
  let p = path;
  const impl = /^<(?:&(?:mut )?)?([^<> ]+)/.exec(p);
  if (impl) p = impl[1];
  return p.split('::').filter((x) => x && !/^\{/.test(x)).slice(0, depth).join('::') || path;
}

/**
 * Whose code a function is: the first of the core's modules its path names (so a generic of
 * the standard library or serde instantiated for a core type counts there), else its group.
 */
function owner(path) {
  const m = /promptloom::(\w+)/.exec(path);
  return m ? `promptloom::${m[1]}` : group(path).split('::')[0];
}

/** A reader of unsigned LEB128 numbers from `buf`, starting at `at`: `read()`, and `pos`. */
function reader(buf, at) {
  const r = {
    pos: at,
    read() {
      let v = 0;
      let sh = 0;
      let b;
      do {
        b = buf[r.pos++];
        v |= (b & 0x7f) << sh;
        sh += 7;
      } while (b & 0x80);
      return v >>> 0;
    },
  };
  return r;
}

/** The code body of each defined function, with its name. */
function functions(buf) {
  const r = reader(buf, 8);
  let p = 8;
  const u32 = () => {
    r.pos = p;
    const v = r.read();
    p = r.pos;
    return v;
  };
  let imported = 0;
  const bodies = [];
  const names = new Map();
  let data = 0;
  while (p < buf.length) {
    const id = buf[p++];
    const size = u32();
    const end = p + size;
    if (id === 2) {
      for (let n = u32(); n > 0; n--) {
        for (let field = 0; field < 2; field++) {
          const len = u32(); // read before adding: `p += u32()` would add to the old p
          p += len;
        }
        const kind = buf[p++];
        if (kind === 0) {
          u32();
          imported++;
        } else if (kind === 1) {
          p++;
          if (buf[p++] & 1) u32();
          u32();
        } else if (kind === 2) {
          if (buf[p++] & 1) u32();
          u32();
        } else if (kind === 3) p += 2;
      }
    } else if (id === 10) {
      for (let n = u32(); n > 0; n--) {
        const s = u32();
        bodies.push(buf.subarray(p, p + s));
        p += s;
      }
    } else if (id === 11) data += size;
    else if (id === 0) {
      const l = u32();
      const name = buf.subarray(p, p + l).toString();
      p += l;
      if (name === 'name') {
        while (p < end) {
          const sub = buf[p++];
          const ss = u32();
          const se = p + ss;
          if (sub === 1) {
            for (let n = u32(); n > 0; n--) {
              const idx = u32();
              const l2 = u32();
              names.set(idx, buf.subarray(p, p + l2).toString());
              p += l2;
            }
          }
          p = se;
        }
      }
    }
    p = end;
  }
  return { data, fns: bodies.map((body, i) => ({ body, name: demangle(names.get(i + imported) ?? `function ${i}`) })) };
}

function table(fns, key, title) {
  const groups = new Map();
  let code = 0;
  for (const f of fns) {
    const g = key(f.name);
    const e = groups.get(g) ?? { bytes: 0, bodies: [] };
    e.bytes += f.body.length;
    e.bodies.push(f.body);
    groups.set(g, e);
    code += f.body.length;
  }
  let out = `| ${title} | code KB | share | gzip KB alone |\n|---|---:|---:|---:|\n`;
  for (const [g, e] of [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top)) {
    out += `| ${g} | ${kb(e.bytes)} | ${((100 * e.bytes) / code).toFixed(1)} % | ${kb(gzipSync(Buffer.concat(e.bodies), { level: 9 }).length)} |\n`;
  }
  return out;
}

const kb = (n) => (n / 1024).toFixed(1);

/** A component's largest core module (a component's section 1 holds a core module). */
function coreModule(buf) {
  if (buf.readUInt32LE(4) !== 0x1000d) return buf;
  const r = reader(buf, 8);
  let best = buf.subarray(0, 0);
  while (r.pos < buf.length) {
    const id = buf[r.pos++];
    const size = r.read();
    if (id === 1 && size > best.length) best = buf.subarray(r.pos, r.pos + size);
    r.pos += size;
  }
  return best;
}

function report(file) {
  const { data, fns } = functions(coreModule(readFileSync(file)));
  if (!fns.some((f) => f.name.startsWith('promptloom::'))) throw new Error(`${file}: no function of the core is named (was the name section stripped?)`);
  const code = fns.reduce((n, f) => n + f.body.length, 0);
  let out = `\n${file}: ${fns.length} functions, ${kb(code)} KB code, ${kb(data)} KB data\n\n`;
  out += `Where the code is defined (depth ${depth}):\n\n${table(fns, group, 'defined in')}\n`;
  out += `Whose code it is (a generic counted at the first core module its path names):\n\n${table(fns, owner, 'owner')}`;
  return out;
}

if (!existsSync(DIR)) {
  console.error(`${DIR} is missing: run scripts/build.sh first`);
  process.exit(1);
}
const want = process.argv[2];
for (const f of readdirSync(DIR).filter((f) => f.endsWith('.wasm')).sort()) {
  if (!want || f === `${want}.wasm`) console.log(report(`${DIR}/${f}`));
}
