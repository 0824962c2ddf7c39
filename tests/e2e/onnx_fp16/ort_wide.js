// Runs an .onnx model with onnxruntime-node (CPU) on raw little-endian
// inputs, as ../../../../shared/tools/reference/ort_run.js does, for the
// float16 and float64 tensors that script does not map.
// usage: node ort_wide.js MODEL.onnx OUT_PREFIX IN_0.bin [IN_1.bin ...]
const fs = require('fs');
const path = require('path');
const dir = process.env.TINYML_REF_DIR || path.join(process.env.HOME, '.cache/tinyml-reference');
const ort = require(path.join(dir, 'node_modules/onnxruntime-node'));
const [model, out, ...ins] = process.argv.slice(2);
const TA = { float32: Float32Array, float16: Uint16Array, float64: Float64Array };
(async () => {
  const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  const feeds = {};
  sess.inputNames.forEach((name, i) => {
    const meta = sess.inputMetadata[i];
    const b = fs.readFileSync(ins[i]);
    const C = TA[meta.type];
    feeds[name] = new ort.Tensor(meta.type, new C(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)), meta.shape);
  });
  const res = await sess.run(feeds);
  sess.outputNames.forEach((name, i) => {
    const t = res[name];
    fs.writeFileSync(`${out}_out_${i}.bin`, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    console.log(JSON.stringify({ kind: 'output', index: i, name, dtype: t.type, shape: t.dims }));
  });
})().catch(e => { console.error(e.message || e); process.exit(1); });
