globalThis.__dbg = [];
await import('./prof4.tmp.mjs');
console.log(globalThis.__dbg.slice(-3));
