/**
 * A reproduction of what docs/performance.md ("Rows promoted by pg's promise form") found, with
 * nothing but Node: an object gets a function made after it, and what that object reaches
 * survives V8's scavenges (and is promoted to the old generation) until the next mark-compact;
 * the same function made before the object does not do it.
 *   node --trace-gc-nvp --max-semi-space-size=16 bench/v8-promotion.js | node bench/v8-promotion.js --summary
 * prints, per way, the share of what was allocated that survived a scavenge and the bytes
 * promoted per job.
 */
const JOBS = 3000;

if (process.argv[2] === '--summary') {
  let input = '';
  process.stdin.on('data', (d) => (input += d));
  process.stdin.on('end', () => {
    const ways = {};
    let current;
    for (const line of input.split('\n')) {
      const marker = /^=== (BEGIN|END) (\S+)/.exec(line);
      if (marker) current = marker[1] === 'BEGIN' ? marker[2] : undefined;
      else if (current && line.includes(' gc=s ')) {
        const w = (ways[current] ??= { allocated: 0, survived: 0, promoted: 0 });
        const field = (k) => Number(new RegExp(` ${k}=(\\d+)`).exec(line)?.[1] ?? 0);
        w.allocated += field('allocated');
        w.survived += field('new_space_survived');
        w.promoted += field('promoted');
      }
    }
    for (const [way, w] of Object.entries(ways)) {
      console.log(`${way.padEnd(16)} survived ${((100 * w.survived) / w.allocated).toFixed(1).padStart(5)}%  promoted ${(w.promoted / JOBS / 1024).toFixed(1).padStart(5)} KB per job`);
    }
  });
} else {
  class Job {
    constructor(callback) {
      this.callback = callback;
      this.rows = [];
    }
  }
  // A job fills its rows on a later turn of the event loop, then calls back with them (as a
  // database driver does with a statement's rows).
  const fill = (job) =>
    setImmediate(() => {
      for (let i = 0; i < 100; i++) job.rows.push({ id: `row ${i} ${Math.random()}`, name: `Group ${i}`, n: i, tags: new Array(12).fill(`tag ${i}`) });
      job.callback(null, job.rows);
    });
  const ways = {
    // the function first, given to the constructor: what survives is what is in flight
    'function-first': () => new Promise((resolve) => fill(new Job((err, rows) => resolve(rows)))),
    // the object first, then a function made and stored into it (pg's promise form)
    'object-first': () =>
      new Promise((resolve) => {
        const job = new Job(undefined);
        job.callback = (err, rows) => resolve(rows);
        fill(job);
      }),
  };
  (async () => {
    for (const [name, job] of Object.entries(ways)) {
      for (let i = 0; i < 200; i++) await job();
      console.log(`=== BEGIN ${name}`);
      for (let i = 0; i < JOBS; i++) await job();
      console.log(`=== END ${name}`);
    }
  })();
}
