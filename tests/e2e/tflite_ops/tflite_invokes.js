// Runs a .tflite model N times on one interpreter with TFLite's wasm build
// (the one ../shared/tools/reference/tflite_run.js uses, which runs once), so
// that models with state (resource variables) can be checked after several
// invokes.  Used by gen_ops.py --refresh (variable_ops.py).
// usage: node tflite_invokes.js MODEL.tflite --in FILE... --invokes N --out PREFIX
//   writes PREFIX_out_<i>.bin: output i after the N-th invoke.
const fs = require('fs');
const path = require('path');
const dir = process.env.TINYML_REF_DIR || path.join(process.env.HOME, '.cache/tinyml-reference');
const W = path.join(dir, 'node_modules/@tensorflow/tfjs-tflite/wasm/');
const args = process.argv.slice(2);
const ins = [];
let invokes = 1, out = null, model = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--in') ins.push(args[++i]);
  else if (args[i] === '--invokes') invokes = +args[++i];
  else if (args[i] === '--out') out = args[++i];
  else model = args[i];
}
if (!model || !out || !(invokes >= 1)) {
  console.error('usage: node tflite_invokes.js MODEL.tflite --in FILE... --invokes N --out PREFIX');
  process.exit(2);
}
const factory = require(W + 'tflite_web_api_cc_simd.js');
factory({ wasmBinary: fs.readFileSync(W + 'tflite_web_api_cc_simd.wasm'), print: () => {},
          printErr: s => process.stderr.write(s + '\n') }).then(M => {
  const bytes = fs.readFileSync(model);
  const p = M._malloc(bytes.length);
  M.HEAPU8.set(bytes, p);
  const st = M.TFLiteWebModelRunner.CreateFromBufferAndOptions(p, bytes.length,
      { numThreads: 1, enableProfiling: false, maxProfilingBufferEntries: 1024 });
  if (!st.ok()) { console.error('create failed:', st.errorMessage()); process.exit(3); }
  const r = st.value();
  const inputs = r.GetInputs();
  if (inputs.size() !== ins.length) { console.error(`${inputs.size()} inputs, ${ins.length} files`); process.exit(4); }
  for (let i = 0; i < ins.length; i++) {
    const buf = inputs.get(i).data(), b = fs.readFileSync(ins[i]);
    if (b.byteLength !== buf.byteLength) { console.error(`input ${i}: ${b.byteLength} bytes, expected ${buf.byteLength}`); process.exit(4); }
    new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength).set(b);
  }
  for (let k = 0; k < invokes; k++)
    if (!r.Infer()) { console.error(`invoke ${k + 1} failed`); process.exit(5); }
  const outputs = r.GetOutputs();
  for (let i = 0; i < outputs.size(); i++) {
    const d = outputs.get(i).data();
    fs.writeFileSync(`${out}_out_${i}.bin`, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  }
}).catch(e => { console.error(e); process.exit(1); });
