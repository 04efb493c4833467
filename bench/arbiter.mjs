// Benchmark: skill state machines in Node through the npm package (`promptloom/composer`),
// beside XState v5 for the same machine, in one run:
//   validate   a generated 1,000-state SkillSpec: validateSkillSpec (every rule, including
//              unreachable-state and no-path-to-terminal detection) vs XState createMachine
//              (which checks targets but not reachability)
//   proposals  1,000,000 proposals through the arbiter (alternating an allowed tool call and
//              a transition) vs 1,000,000 events sent to an XState actor of the same machine
// Ratios, not absolute times: medians of alternating rounds. Not part of the test command.
import * as pl from 'promptloom/composer';
import { createMachine, createActor } from 'xstate';
import { writeChart } from './chart.mjs';

const N = Number(process.env.STATES ?? 1000);
const PROPOSALS = Number(process.env.PROPOSALS ?? 1_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const VROUNDS = Number(process.env.VALIDATE_ROUNDS ?? 15);

// A chain s0 → s1 → … → s(N-2) with `next`, a `back` edge every 10 states, `restart` from
// s(N-2) to s0 and `finish` to the terminal `done`; two allowed tools per state.
const tools = ['search', 'read', 'write', 'query'];
const states = {};
for (let i = 0; i < N - 1; i++) {
  const t = [{ on: 'next', to: i < N - 2 ? `s${i + 1}` : 's0' }];
  if (i % 10 === 9) t.push({ on: 'back', to: `s${i - 5}` });
  if (i === N - 2) t.push({ on: 'finish', to: 'done' });
  states[`s${i}`] = { objective: `Step ${i}.`, allowed_tools: [tools[i % 4], tools[(i + 1) % 4]], transitions: t };
}
states.done = { terminal: true };
const spec = { name: 'big', description: 'generated', initial_state: 's0', states, max_steps: PROPOSALS * 4, interruptible: true };
const xconfig = { id: 'big', initial: 's0', states: Object.fromEntries(Object.entries(states).map(([k, s]) => [k, s.terminal ? { type: 'final' } : { on: Object.fromEntries(s.transitions.map((t) => [t.on, t.to])) }])) };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const v = pl.validateSkillSpec(spec, { tools });
if (!v.ok) throw new Error(JSON.stringify(v.problems.slice(0, 3)));

const val = { promptloom: [], xstate: [] };
// Warm both up (the first calls compile), then alternate.
for (let r = 0; r < 3; r++) {
  pl.validateSkillSpec(spec, { tools });
  createMachine(xconfig);
}
for (let r = 0; r < VROUNDS; r++) {
  let t0 = performance.now();
  pl.validateSkillSpec(spec, { tools });
  val.promptloom.push(performance.now() - t0);
  t0 = performance.now();
  createMachine(xconfig);
  val.xstate.push(performance.now() - t0);
}

const registry = pl.buildSkillRegistry([spec], { tools });
const runs = { promptloom: [], xstate: [] };
for (let r = 0; r < 3; r++) {
  const a = new pl.Arbiter(registry);
  a.start(`lane${r}`, 'big', null);
  let state = 0;
  let t0 = performance.now();
  for (let i = 0; i < PROPOSALS; i++) {
    if (i % 2 === 0) a.propose(`lane${r}`, { type: 'tool', name: tools[state % 4] });
    else {
      a.propose(`lane${r}`, { type: 'transition', event: 'next' });
      state = state === N - 2 ? 0 : state + 1;
    }
  }
  runs.promptloom.push(((performance.now() - t0) * 1000) / PROPOSALS);
  const actor = createActor(createMachine(xconfig)).start();
  t0 = performance.now();
  for (let i = 0; i < PROPOSALS; i++) actor.send({ type: i % 2 === 0 ? 'noop' : 'next' });
  runs.xstate.push(((performance.now() - t0) * 1000) / PROPOSALS);
}
let out = `\nSkill state machines in Node (${N} states; ${PROPOSALS.toLocaleString('en')} proposals / events; medians)\n\n`;
out += '| | promptloom | XState v5 | ratio |\n|---|---:|---:|---:|\n';
const vp = median(val.promptloom);
const vx = median(val.xstate);
out += `| validate / build the ${N}-state machine | ${vp.toFixed(2)} ms (range ${Math.min(...val.promptloom).toFixed(2)}–${Math.max(...val.promptloom).toFixed(2)}) | ${vx.toFixed(2)} ms | ${(vp / vx).toFixed(2)}× |\n`;
const pp = median(runs.promptloom);
const px = median(runs.xstate);
out += `| one proposal / event | ${pp.toFixed(3)} µs (range ${Math.min(...runs.promptloom).toFixed(3)}–${Math.max(...runs.promptloom).toFixed(3)}) | ${px.toFixed(3)} µs | ${(pp / px).toFixed(2)}× |\n`;
console.log(out);
console.log(`targets: validation < 3 ms ${vp < 3 ? 'met' : 'missed'}; < 1 µs per proposal ${pp < 1 ? 'met' : 'missed'}`);
writeChart('arbiter', `Skill state machines (${N} states), Node: promptloom vs XState v5`, [
  { label: `validate / build the ${N}-state machine (ms)`, bars: [{ name: 'promptloom', value: vp, text: `${vp.toFixed(2)} ms` }, { name: 'XState v5', value: vx, text: `${vx.toFixed(2)} ms` }] },
  { label: 'one proposal / event (µs)', bars: [{ name: 'promptloom', value: pp, text: `${pp.toFixed(3)} µs` }, { name: 'XState v5', value: px, text: `${px.toFixed(3)} µs` }] },
]);
