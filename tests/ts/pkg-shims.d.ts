// What the package's JS imports that TypeScript cannot read: the wasm modules the workerd
// entries import (wrangler and workerd load them as compiled modules).
declare module '*.wasm' {
  const module: WebAssembly.Module;
  export default module;
}
