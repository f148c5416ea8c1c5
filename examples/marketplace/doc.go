// Command marketplace reproduces the experiment of Redis in Action,
// chapter 6.2, on real Redis: a market (a ZSET of "item.seller" scored by
// price), one inventory SET and one funds HASH per user, listers moving items
// from their inventory to the market and buyers moving them to theirs while
// paying the seller, under three kinds of concurrency control:
//
//   - watch: optimistic WATCH/MULTI/EXEC, retried when EXEC aborts;
//   - coarse: one lock on the whole market, held for each listing and sale;
//   - fine: a lock per item, and for a sale the item's lock together with
//     the buyer's funds lock, taken all or nothing in one global key order.
//
// Locks come from quorumlock (package redlock) on one master (the data
// master itself, like the book's SETNX lock) or on five. Every run ends with
// a check that no item and no coin was lost or duplicated.
//
//	go run ./examples/marketplace                 # 1x1 and 5x5, 3 s each
//	go run ./examples/marketplace --duration 10s  # longer windows
//
// docs/marketplace.md puts a run beside the book's table.
package main
