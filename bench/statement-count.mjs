// Counts the statements a service process sends its database, for the benches that compare database work
// (bench/reconnect-storm.mjs). Loaded with `node --import ./bench/statement-count.mjs`, it counts every
// statement sent through PGlite (query, exec, and those inside a transaction) or node-postgres (a client's
// query; BEGIN, COMMIT and ROLLBACK are counted as transactions, not statements). On SIGUSR2 it writes
// `{ statements, transactions }` so far to STATEMENT_COUNT_FILE.
import fs from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

const file = process.env.STATEMENT_COUNT_FILE;
const counts = { statements: 0, transactions: 0 };

/** `target[name]` counting each call first, or counting as `count(args)` says. */
function counting(target, name, count = () => (counts.statements++, undefined)) {
  const original = target[name];
  target[name] = function (...args) {
    count(args);
    return original.apply(this, args);
  };
}

for (const name of ['query', 'exec']) counting(PGlite.prototype, name);
const transaction = PGlite.prototype.transaction;
PGlite.prototype.transaction = function (callback) {
  counts.transactions++;
  return transaction.call(this, (tx) => {
    // The transaction's own statements: its query and sql call none of the instance's methods.
    for (const name of ['query', 'sql', 'exec']) counting(tx, name);
    return callback(tx);
  });
};

counting(pg.Client.prototype, 'query', ([query]) => {
  const text = typeof query === 'string' ? query : query?.text;
  if (typeof text === 'string' && /^\s*begin\b/i.test(text)) counts.transactions++;
  else if (!(typeof text === 'string' && /^\s*(commit|rollback)\b/i.test(text))) counts.statements++;
});

if (file) {
  process.on('SIGUSR2', () => {
    fs.writeFileSync(`${file}.tmp`, JSON.stringify(counts));
    fs.renameSync(`${file}.tmp`, file);
  });
}
