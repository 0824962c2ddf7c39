// Per-node times of onnxruntime-node, one intra-op thread, to set beside
// ours per phase (bench/phases.c with PHASES_VERBOSE=1; docs/PERF.md).
//
//   node bench/ort_profile.js MODEL.onnx [RUNS] [--shape 1,3,224,224]
//
// Runs the model RUNS times (default 20) on random float32 input of the
// given shape (default 1x3x224x224, the zoo models'), with onnxruntime's
// profiler on, and prints each node's median kernel time in microseconds,
// in execution order, then the sum.  onnxruntime-node is the one that
// ../shared/tools/reference/setup.sh installs.
const path = require('path');
const fs = require('fs');
const os = require('os');
const ort = require(path.join(os.homedir(), '.cache', 'tinyml-reference', 'node_modules',
                              'onnxruntime-node'));

const args = process.argv.slice(2);
let model = null, runs = 20, shape = [1, 3, 224, 224];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--shape') shape = args[++i].split(',').map(Number);
  else if (model === null) model = args[i];
  else runs = +args[i];
}
if (!model || !(runs > 0) || shape.some((d) => !(d > 0))) {
  console.error('usage: node bench/ort_profile.js MODEL.onnx [RUNS] [--shape 1,3,224,224]');
  process.exit(2);
}

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  const sess = await ort.InferenceSession.create(model, {
    intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: 'all',
    enableProfiling: true, profileFilePrefix: path.join(dir, 'p'),
  });
  const n = shape.reduce((a, b) => a * b, 1);
  const data = Float32Array.from({length: n}, () => Math.random() * 2 - 1);
  const feeds = {[sess.inputNames[0]]: new ort.Tensor('float32', data, shape)};
  for (let i = 0; i < runs; i++) await sess.run(feeds);
  sess.endProfiling();
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
  const events = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
  const times = new Map(), ops = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    if (!times.has(e.name)) times.set(e.name, []);
    times.get(e.name).push(e.dur);
    ops.set(e.name, (e.args || {}).op_name);
  }
  let total = 0;
  for (const [name, t] of times) {
    t.sort((a, b) => a - b);
    const median = t[t.length >> 1];
    total += median;
    console.log(`${String(median).padStart(8)} us  ${ops.get(name)}  ${name}`);
  }
  console.log(`${String(total).padStart(8)} us  total`);
  fs.rmSync(dir, {recursive: true, force: true});
})().catch((e) => { console.error(String(e)); process.exit(1); });
