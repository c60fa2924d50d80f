// SPDX-License-Identifier: MIT
// Pushes one CPU profile with Pyroscope's own Node.js client
// (@pyroscope/nodejs) to SERVER, to prove that the test endpoint accepts
// what a real Pyroscope client sends: node pyroscope_client.mjs SERVER APP
import Pyroscope from '@pyroscope/nodejs';

const [server, app] = process.argv.slice(2);
Pyroscope.init({ serverAddress: server, appName: app, flushIntervalMs: 60000,
  tags: { region: 'test' } });
Pyroscope.startCpuProfiling();
const end = Date.now() + 1500;
let x = 0;
while (Date.now() < end) x += Math.sqrt(x + 1);
await Pyroscope.stopCpuProfiling(); // flushes the last profile
console.log('pushed', x > 0);
