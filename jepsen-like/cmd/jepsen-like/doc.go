// Command jepsen-like runs the fault suite and checks histories.
//
//	go run ./jepsen-like/cmd/jepsen-like run --backend local --workload lock --nemesis restart --seed 1 --out out/
//	go run ./jepsen-like/cmd/jepsen-like check out/history.jsonl
//	go run ./jepsen-like/cmd/jepsen-like table --out docs/jepsen-like.md
//
// Exit codes: 0 every checker says valid, 1 one says invalid, 2 unknown or
// bad usage. See docs/jepsen-like.md.
package main
